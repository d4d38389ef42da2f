import type { SuppressionReason } from '../core/types.js';
import { Repo } from './repo.js';

export interface SuppressionRecord {
  id: string;
  accountId: string;
  address: string;
  reason: SuppressionReason;
  canRelease: boolean;
  createdAt: number;
  releasedAt: number | null;
}

type SuppressionRow = Omit<SuppressionRecord, 'canRelease'> & { canRelease: number };

const COLUMNS = `id, account_id AS accountId, address, reason, can_release AS canRelease,
  created_at AS createdAt, released_at AS releasedAt`;

const toRecord = (row: SuppressionRow): SuppressionRecord => ({ ...row, canRelease: row.canRelease === 1 });

/** Addresses an account may not send to (docs/design.md "suppression reasons"). */
export class SuppressionRepo extends Repo {
  /** Adds an active suppression; false when the address is already actively suppressed. */
  add(record: Omit<SuppressionRecord, 'releasedAt'>): boolean {
    return (
      this.sql(
        `INSERT OR IGNORE INTO suppressions (id, account_id, address, reason, can_release, created_at)
       VALUES (?, ?, ?, ?, ?, ?)`,
      ).run(record.id, record.accountId, record.address, record.reason, record.canRelease ? 1 : 0, record.createdAt).changes === 1
    );
  }

  /**
   * Turns the address's active releasable suppression (bounce or manual) into a complaint,
   * which the agent may no longer release; false when there is none to turn.
   */
  escalateToComplaint(accountId: string, address: string): boolean {
    return (
      this.sql(
        `UPDATE suppressions SET reason = 'complaint', can_release = 0
       WHERE account_id = ? AND address = ? AND released_at IS NULL AND reason <> 'complaint'`,
      ).run(accountId, address).changes === 1
    );
  }

  /** Which of `addresses` (normalized) are actively suppressed for the account. */
  activeAmong(accountId: string, addresses: readonly string[]): Set<string> {
    const statement = this.sql('SELECT 1 FROM suppressions WHERE account_id = ? AND address = ? AND released_at IS NULL');
    return new Set(addresses.filter((address) => statement.get(accountId, address) !== undefined));
  }

  listActive(accountId: string, limit: number): SuppressionRecord[] {
    const rows = this.sql(`SELECT ${COLUMNS} FROM suppressions WHERE account_id = ? AND released_at IS NULL ORDER BY created_at DESC, id LIMIT ?`).all(
      accountId,
      limit,
    ) as SuppressionRow[];
    return rows.map(toRecord);
  }

  byId(accountId: string, id: string): SuppressionRecord | null {
    const row = this.sql(`SELECT ${COLUMNS} FROM suppressions WHERE account_id = ? AND id = ?`).get(accountId, id) as SuppressionRow | undefined;
    return row ? toRecord(row) : null;
  }

  /** Releases an active suppression; false when it was not active. */
  release(id: string, now: number): boolean {
    return this.sql('UPDATE suppressions SET released_at = ? WHERE id = ? AND released_at IS NULL').run(now, id).changes === 1;
  }
}
