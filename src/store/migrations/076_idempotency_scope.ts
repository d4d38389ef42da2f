import type { Migration } from './migration.js';

/**
 * Idempotency records get a scope: '' for the account's own keys (the full key, limited
 * keys, an owner's approval), or a sandbox key's id for that key's records. A sandbox key's
 * send is a fake one that never leaves the host, so its record must never answer another
 * key's send (that send would be answered `replayed` and nothing sent), nor the account's
 * record its send. The primary key gains the scope, so the table is rebuilt; existing records
 * keep the account scope (src/services/sending/sending.ts, idempotencyScopeOf).
 */
export const idempotencyScope: Migration = {
  version: 76,
  name: 'idempotency_scope',
  sql: `
    CREATE TABLE idempotency_records_new (
      account_id TEXT NOT NULL,
      scope TEXT NOT NULL DEFAULT '',
      idempotency_key TEXT NOT NULL,
      key_id TEXT NOT NULL,
      content_hash TEXT NOT NULL,
      submission_id TEXT NOT NULL,
      response_json TEXT NOT NULL,
      created_at INTEGER NOT NULL,
      PRIMARY KEY (account_id, scope, idempotency_key)
    );
    INSERT INTO idempotency_records_new (account_id, scope, idempotency_key, key_id, content_hash, submission_id, response_json, created_at)
      SELECT account_id, '', idempotency_key, key_id, content_hash, submission_id, response_json, created_at FROM idempotency_records;
    DROP TABLE idempotency_records;
    ALTER TABLE idempotency_records_new RENAME TO idempotency_records;
    CREATE INDEX idempotency_records_age ON idempotency_records(created_at);
  `,
};
