import { KEYS_CLOSED, type KeysClosedNotice } from '../core/events.js';
import type { CommitFeed } from './commit-feed.js';
import type { Db } from './db.js';
import { Repo } from './repo.js';

export type KeyStatus = 'active' | 'pending' | 'revoked' | 'expired';

export interface KeyRecord {
  id: string;
  accountId: string;
  kind: 'full' | 'access';
  status: KeyStatus;
  createdAt: number;
  expiresAt: number | null;
  revokedAt: number | null;
}

const COLUMNS = `id, account_id AS accountId, kind, status, created_at AS createdAt,
  expires_at AS expiresAt, revoked_at AS revokedAt`;

/**
 * API keys. Every change that stops a key working stages a KEYS_CLOSED notice on the commit
 * feed, published once the transaction is durable: whoever holds a session opened with a key
 * (an event stream) hears of it then, whichever path closed the key.
 */
export class KeyRepo extends Repo {
  constructor(
    db: Db,
    private readonly feed: CommitFeed,
  ) {
    super(db);
  }

  insert(key: KeyRecord & { keyHash: string }): void {
    this.sql(
      `INSERT INTO api_keys (id, account_id, kind, key_hash, status, created_at, expires_at, revoked_at)
         VALUES (@id, @accountId, @kind, @keyHash, @status, @createdAt, @expiresAt, @revokedAt)`,
    ).run(key);
  }

  byHash(keyHash: string): KeyRecord | null {
    const row = this.sql(`SELECT ${COLUMNS} FROM api_keys WHERE key_hash = ?`).get(keyHash) as KeyRecord | undefined;
    return row ?? null;
  }

  byId(id: string): KeyRecord | null {
    const row = this.sql(`SELECT ${COLUMNS} FROM api_keys WHERE id = ?`).get(id) as KeyRecord | undefined;
    return row ?? null;
  }

  /** The account's full key in `status` (at most one each: partial unique indexes, migration 005). */
  fullKey(accountId: string, status: 'active' | 'pending'): KeyRecord | null {
    const row = this.sql(`SELECT ${COLUMNS} FROM api_keys WHERE account_id = ? AND kind = 'full' AND status = ?`).get(accountId, status) as
      | KeyRecord
      | undefined;
    return row ?? null;
  }

  /** Moves an active or pending key to `status`; returns false when it was already neither. */
  close(id: string, status: 'revoked' | 'expired', at: number): boolean {
    const accountId = this.sql(
      `UPDATE api_keys SET status = ?, revoked_at = CASE WHEN ? = 'revoked' THEN ? ELSE revoked_at END
       WHERE id = ? AND status IN ('active', 'pending') RETURNING account_id`,
    )
      .pluck()
      .get(status, status, at, id) as string | undefined;
    if (accountId !== undefined) this.closed(accountId);
    return accountId !== undefined;
  }

  /** Revokes every usable key of an account (a deleted domain mailbox); returns how many. */
  revokeAllOf(accountId: string, at: number): number {
    const changes = this.sql(`UPDATE api_keys SET status = 'revoked', revoked_at = ? WHERE account_id = ? AND status IN ('active', 'pending')`).run(
      at,
      accountId,
    ).changes;
    if (changes > 0) this.closed(accountId);
    return changes;
  }

  /** The pending replacement becomes the account key: no expiry any more. */
  activate(id: string): boolean {
    return this.sql(`UPDATE api_keys SET status = 'active', expires_at = NULL WHERE id = ? AND status = 'pending'`).run(id).changes === 1;
  }

  /** Marks replacements past their 30 minutes expired; one account or (null) all. */
  expirePending(accountId: string | null, now: number): number {
    const changes = this.sql(
      `UPDATE api_keys SET status = 'expired'
       WHERE status = 'pending' AND expires_at <= ? AND (? IS NULL OR account_id = ?)`,
    ).run(now, accountId, accountId).changes;
    if (changes > 0) this.closed(accountId);
    return changes;
  }

  private closed(accountId: string | null): void {
    const notice: KeysClosedNotice = { accountId };
    if (this.db.inTransaction) this.feed.stage(KEYS_CLOSED, notice);
    else this.feed.publish([{ topic: KEYS_CLOSED, payload: notice }]);
  }
}
