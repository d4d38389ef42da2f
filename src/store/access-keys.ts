import type { Permission } from '../core/types.js';
import type { KeyStatus } from './keys.js';
import { Repo } from './repo.js';

export type AccessKeyKind = 'mail' | 'domain';

/** The immutable policy a limited key was issued with (docs/agents/keys.md). */
export interface AccessPolicy {
  keyId: string;
  name: string;
  kind: AccessKeyKind;
  permissions: Permission[];
  allowedSenders: string[] | null;
  allowedRecipients: string[] | null;
  dailyRecipientLimit: number | null;
  totalRecipientLimit: number | null;
  /** Sends are validated, charged to nobody and never leave the host (migration 53). */
  sandbox: boolean;
}

export interface AccessKeyRecord extends AccessPolicy {
  status: KeyStatus;
  createdAt: number;
  expiresAt: number | null;
  revokedAt: number | null;
}

interface PolicyRow {
  keyId: string;
  name: string;
  kind: AccessKeyKind;
  permissionsJson: string;
  allowedSendersJson: string | null;
  allowedRecipientsJson: string | null;
  dailyRecipientLimit: number | null;
  totalRecipientLimit: number | null;
  sandbox: number;
}

interface KeyRow extends PolicyRow {
  status: KeyStatus;
  createdAt: number;
  expiresAt: number | null;
  revokedAt: number | null;
}

const POLICY_COLUMNS = `p.key_id AS keyId, p.name, p.kind, p.permissions_json AS permissionsJson,
  p.allowed_senders_json AS allowedSendersJson, p.allowed_recipients_json AS allowedRecipientsJson,
  p.daily_recipient_limit AS dailyRecipientLimit, p.total_recipient_limit AS totalRecipientLimit, p.sandbox`;
const KEY_COLUMNS = `${POLICY_COLUMNS}, k.status, k.created_at AS createdAt, k.expires_at AS expiresAt, k.revoked_at AS revokedAt`;
/** Usable now: active and not past its expiry. */
const USABLE = `(k.status = 'active' AND (k.expires_at IS NULL OR k.expires_at > @now))`;

const parseList = (json: string | null): string[] | null => (json === null ? null : (JSON.parse(json) as string[]));

const toPolicy = (row: PolicyRow): AccessPolicy => ({
  keyId: row.keyId,
  name: row.name,
  kind: row.kind,
  permissions: JSON.parse(row.permissionsJson) as Permission[],
  allowedSenders: parseList(row.allowedSendersJson),
  allowedRecipients: parseList(row.allowedRecipientsJson),
  dailyRecipientLimit: row.dailyRecipientLimit,
  totalRecipientLimit: row.totalRecipientLimit,
  sandbox: row.sandbox === 1,
});

const toRecord = (row: KeyRow): AccessKeyRecord => ({
  ...toPolicy(row),
  status: row.status,
  createdAt: row.createdAt,
  expiresAt: row.expiresAt,
  revokedAt: row.revokedAt,
});

export class AccessKeyRepo extends Repo {
  insertPolicy(policy: AccessPolicy): void {
    this.sql(
      `INSERT INTO access_key_policies (key_id, name, kind, permissions_json, allowed_senders_json,
         allowed_recipients_json, daily_recipient_limit, total_recipient_limit, sandbox)
       VALUES (@keyId, @name, @kind, @permissions, @allowedSenders, @allowedRecipients, @dailyRecipientLimit, @totalRecipientLimit, @sandbox)`,
    ).run({
      ...policy,
      permissions: JSON.stringify(policy.permissions),
      allowedSenders: policy.allowedSenders === null ? null : JSON.stringify(policy.allowedSenders),
      allowedRecipients: policy.allowedRecipients === null ? null : JSON.stringify(policy.allowedRecipients),
      sandbox: policy.sandbox ? 1 : 0,
    });
  }

  policy(keyId: string): AccessPolicy | null {
    const row = this.sql(`SELECT ${POLICY_COLUMNS} FROM access_key_policies p WHERE p.key_id = ?`).get(keyId) as PolicyRow | undefined;
    return row ? toPolicy(row) : null;
  }

  byId(accountId: string, keyId: string): AccessKeyRecord | null {
    const row = this.sql(
      `SELECT ${KEY_COLUMNS} FROM access_key_policies p JOIN api_keys k ON k.id = p.key_id
       WHERE k.account_id = ? AND k.id = ?`,
    ).get(accountId, keyId) as KeyRow | undefined;
    return row ? toRecord(row) : null;
  }

  /** Usable keys first, then newest first (docs/agents/keys.md: up to 100, usable first). */
  list(accountId: string, now: number, limit: number): AccessKeyRecord[] {
    const rows = this.sql(
      `SELECT ${KEY_COLUMNS} FROM access_key_policies p JOIN api_keys k ON k.id = p.key_id
       WHERE k.account_id = @accountId
       ORDER BY ${USABLE} DESC, k.created_at DESC, k.id LIMIT @limit`,
    ).all({ accountId, now, limit }) as KeyRow[];
    return rows.map(toRecord);
  }

  /** Units the key holds in all time: kept by triggers on its recipient rows (migration 006). */
  totalUnitsHeld(keyId: string): number {
    const row = this.sql('SELECT total_units_held AS n FROM access_key_policies WHERE key_id = ?').get(keyId) as { n: number } | undefined;
    return row?.n ?? 0;
  }

  countUsable(accountId: string, now: number): number {
    const row = this.sql(`SELECT COUNT(*) AS n FROM api_keys k WHERE k.account_id = @accountId AND k.kind = 'access' AND ${USABLE}`).get({
      accountId,
      now,
    }) as { n: number };
    return row.n;
  }
}
