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

export class KeyRepo extends Repo {

  insert(key: KeyRecord & { keyHash: string }): void {
    this.sql(
        `INSERT INTO api_keys (id, account_id, kind, key_hash, status, created_at, expires_at, revoked_at)
         VALUES (@id, @accountId, @kind, @keyHash, @status, @createdAt, @expiresAt, @revokedAt)`,
      )
      .run(key);
  }

  byHash(keyHash: string): KeyRecord | null {
    const row = this.sql(`SELECT ${COLUMNS} FROM api_keys WHERE key_hash = ?`).get(keyHash) as KeyRecord | undefined;
    return row ?? null;
  }
}
