import { Repo } from './repo.js';

export interface IdempotencyRecord {
  accountId: string;
  /** '' for the account's own keys, or a sandbox key's own scope (migration 76). */
  scope: string;
  idempotencyKey: string;
  /** The API key that made the first request. */
  keyId: string;
  contentHash: string;
  submissionId: string;
  /** The first response, exactly as it was answered. */
  responseJson: string;
  createdAt: number;
}

const COLUMNS = `account_id AS accountId, scope, idempotency_key AS idempotencyKey, key_id AS keyId,
  content_hash AS contentHash, submission_id AS submissionId, response_json AS responseJson, created_at AS createdAt`;

/** Idempotency keys of send requests, one per (account, scope, key); kept >= 24 h (`limits.idempotencyRetentionHours`). */
export class IdempotencyRepo extends Repo {
  get(accountId: string, scope: string, idempotencyKey: string): IdempotencyRecord | null {
    const row = this.sql(`SELECT ${COLUMNS} FROM idempotency_records WHERE account_id = ? AND scope = ? AND idempotency_key = ?`).get(
      accountId,
      scope,
      idempotencyKey,
    ) as IdempotencyRecord | undefined;
    return row ?? null;
  }

  insert(record: IdempotencyRecord): void {
    this.sql(
      `INSERT INTO idempotency_records (account_id, scope, idempotency_key, key_id, content_hash, submission_id, response_json, created_at)
       VALUES (@accountId, @scope, @idempotencyKey, @keyId, @contentHash, @submissionId, @responseJson, @createdAt)`,
    ).run(record);
  }

  /** Removes records created before `before`; the sweep passes now - retention (>= 24 h). */
  sweepBefore(before: number): number {
    return this.sql('DELETE FROM idempotency_records WHERE created_at < ?').run(before).changes;
  }
}
