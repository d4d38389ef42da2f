import type { Migration } from './migration.js';

/**
 * Key rotation, limited access keys and two-factor (docs/agents/keys.md).
 *
 * Rotation reuses api_keys: the replacement is a full key with status `pending` and an
 * `expires_at` 30 minutes out. At most one active and one pending full key per account
 * (partial unique indexes), so a race cannot leave two.
 *
 * A limited key is an api_keys row of kind `access` (status active/revoked, expiry in
 * expires_at) plus its immutable policy here. Budgets are not counters: they are derived
 * from the send path's recipient rows by key_id in the transaction that accepts a send.
 */
export const keys: Migration = {
  version: 5,
  name: 'keys',
  sql: `
    CREATE UNIQUE INDEX api_keys_one_active_full ON api_keys(account_id) WHERE kind = 'full' AND status = 'active';
    CREATE UNIQUE INDEX api_keys_one_pending_full ON api_keys(account_id) WHERE kind = 'full' AND status = 'pending';
    CREATE INDEX api_keys_pending_expiry ON api_keys(expires_at) WHERE status = 'pending';

    CREATE TABLE access_key_policies (
      key_id TEXT PRIMARY KEY REFERENCES api_keys(id),
      name TEXT NOT NULL,
      kind TEXT NOT NULL CHECK (kind IN ('mail', 'domain')),
      permissions_json TEXT NOT NULL,
      allowed_senders_json TEXT,
      allowed_recipients_json TEXT,
      daily_recipient_limit INTEGER CHECK (daily_recipient_limit > 0),
      total_recipient_limit INTEGER CHECK (total_recipient_limit > 0)
    );

    -- TOTP (RFC 6238) per account. The seed is sealed with the data folder's secret key;
    -- last_step is the last accepted time step, so a code is never accepted twice.
    CREATE TABLE two_factor (
      account_id TEXT PRIMARY KEY REFERENCES accounts(id),
      status TEXT NOT NULL CHECK (status IN ('pending', 'enabled')),
      sealed_seed TEXT NOT NULL,
      last_step INTEGER NOT NULL DEFAULT 0,
      created_at INTEGER NOT NULL,
      enabled_at INTEGER
    );
  `,
};
