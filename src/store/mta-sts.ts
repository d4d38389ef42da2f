import type { CachedStsPolicy, StsMode, StsPolicy } from '../core/mta-sts.js';
import { Repo } from './repo.js';

interface PolicyRow {
  policy_id: string;
  mode: StsMode;
  mx_json: string;
  max_age: number;
  fetched_at: number;
}

/**
 * MTA-STS policies of recipient domains (migration 41), kept until max_age runs out so that a
 * restart cannot be used to strip a policy (RFC 8461 section 5.1).
 */
export class MtaStsRepo extends Repo {
  /** The domain's policy while it is fresh, else null. */
  get(domain: string, now: number): CachedStsPolicy | null {
    const row = this.sql('SELECT policy_id, mode, mx_json, max_age, fetched_at FROM mta_sts_policies WHERE domain = ? AND expires_at > ?').get(domain, now) as
      | PolicyRow
      | undefined;
    return row ? { id: row.policy_id, mode: row.mode, mx: JSON.parse(row.mx_json) as string[], maxAge: row.max_age, fetchedAt: row.fetched_at } : null;
  }

  /** Replaces the domain's policy; policies that expired meanwhile go. */
  put(domain: string, policy: StsPolicy, fetchedAt: number): void {
    this.sql(
      `INSERT INTO mta_sts_policies (domain, policy_id, mode, mx_json, max_age, fetched_at, expires_at) VALUES (?, ?, ?, ?, ?, ?, ?)
       ON CONFLICT (domain) DO UPDATE SET policy_id = excluded.policy_id, mode = excluded.mode, mx_json = excluded.mx_json,
         max_age = excluded.max_age, fetched_at = excluded.fetched_at, expires_at = excluded.expires_at`,
    ).run(domain, policy.id, policy.mode, JSON.stringify(policy.mx), policy.maxAge, fetchedAt, fetchedAt + policy.maxAge * 1000);
    this.sql('DELETE FROM mta_sts_policies WHERE expires_at <= ?').run(fetchedAt);
  }
}
