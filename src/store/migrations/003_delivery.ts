import type { Migration } from './migration.js';

/**
 * Delivery (docs/operators/delivery.md), on top of 002's outbound tables:
 * - `submission_recipients.claimed_at`: the delivery worker claims a due recipient in a
 *   transaction before it talks SMTP, so no recipient is handed over twice at once. A claim
 *   left behind by a crashed process is settled as `unresolved` (the message may have gone out).
 * - `settings`: server-wide secrets generated once, e.g. the bounce-token HMAC key.
 * - `dkim_keys`: one RSA key per signing domain (`agentpost dkim generate <domain>`). The
 *   private key lives in the database, next to the mail it signs, so a backup of the one
 *   database file is a complete backup; it is never logged or served.
 */
export const delivery: Migration = {
  version: 3,
  name: 'delivery',
  sql: `
    ALTER TABLE submission_recipients ADD COLUMN claimed_at INTEGER;
    CREATE INDEX submission_recipients_claimed ON submission_recipients(claimed_at) WHERE claimed_at IS NOT NULL;

    CREATE TABLE settings (
      name TEXT PRIMARY KEY,
      value BLOB NOT NULL,
      created_at INTEGER NOT NULL
    );

    CREATE TABLE dkim_keys (
      domain TEXT PRIMARY KEY,
      selector TEXT NOT NULL,
      private_key_pem TEXT NOT NULL,
      public_key_b64 TEXT NOT NULL,
      created_at INTEGER NOT NULL
    );
  `,
};
