import { Repo } from './repo.js';

export interface TwoFactorRecord {
  accountId: string;
  status: 'pending' | 'enabled';
  sealedSeed: string;
  /** The last RFC 6238 time step whose code was accepted; 0 before any. */
  lastStep: number;
  createdAt: number;
  enabledAt: number | null;
}

const COLUMNS = `account_id AS accountId, status, sealed_seed AS sealedSeed, last_step AS lastStep,
  created_at AS createdAt, enabled_at AS enabledAt`;

export class TwoFactorRepo extends Repo {
  byAccount(accountId: string): TwoFactorRecord | null {
    const row = this.sql(`SELECT ${COLUMNS} FROM two_factor WHERE account_id = ?`).get(accountId) as TwoFactorRecord | undefined;
    return row ?? null;
  }

  /** A new enrollment replaces an unconfirmed one. */
  upsertPending(accountId: string, sealedSeed: string, now: number): void {
    this.sql(
      `INSERT INTO two_factor (account_id, status, sealed_seed, last_step, created_at) VALUES (?, 'pending', ?, 0, ?)
       ON CONFLICT (account_id) DO UPDATE SET status = 'pending', sealed_seed = excluded.sealed_seed,
         last_step = 0, created_at = excluded.created_at, enabled_at = NULL`,
    ).run(accountId, sealedSeed, now);
  }

  /** Records the step of an accepted code; false when that step (or a later one) was used already. */
  useStep(accountId: string, step: number): boolean {
    return this.sql('UPDATE two_factor SET last_step = ? WHERE account_id = ? AND last_step < ?').run(step, accountId, step).changes === 1;
  }

  enable(accountId: string, now: number): void {
    this.sql(`UPDATE two_factor SET status = 'enabled', enabled_at = ? WHERE account_id = ?`).run(now, accountId);
  }

  remove(accountId: string): void {
    this.sql('DELETE FROM two_factor WHERE account_id = ?').run(accountId);
  }
}
