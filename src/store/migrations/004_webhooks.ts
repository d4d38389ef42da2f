import type { Migration } from './migration.js';

/** Webhook endpoints, their events (the exact body sent each time), every attempt, and outbox read cursors. */
export const webhooks: Migration = {
  version: 4,
  name: 'webhooks',
  sql: `
    CREATE TABLE webhook_endpoints (
      id TEXT PRIMARY KEY,
      account_id TEXT NOT NULL REFERENCES accounts(id),
      url TEXT NOT NULL,
      events_json TEXT NOT NULL,
      -- The HMAC key (a signing key, not a credential); NULL once the endpoint is revoked.
      signing_secret TEXT,
      status TEXT NOT NULL CHECK (status IN ('registered', 'verified', 'paused', 'revoked')),
      paused_reason TEXT,
      -- The INBOX baseline set by the last successful verification.
      baseline_mailbox_id TEXT,
      baseline_uid_validity TEXT,
      baseline_uid INTEGER,
      verified_at INTEGER,
      created_at INTEGER NOT NULL,
      revoked_at INTEGER
    );
    -- One endpoint per agent; revoked ones stay for the delivery history.
    CREATE UNIQUE INDEX webhook_endpoints_one_per_account ON webhook_endpoints(account_id) WHERE status <> 'revoked';

    CREATE TABLE webhook_events (
      seq INTEGER PRIMARY KEY,
      id TEXT NOT NULL UNIQUE,
      account_id TEXT NOT NULL,
      endpoint_id TEXT NOT NULL REFERENCES webhook_endpoints(id),
      type TEXT NOT NULL,
      body TEXT NOT NULL,
      status TEXT NOT NULL CHECK (status IN ('pending', 'delivered', 'failed', 'cancelled')),
      attempts INTEGER NOT NULL DEFAULT 0,
      replays INTEGER NOT NULL DEFAULT 0,
      next_attempt_at INTEGER,
      last_attempt_at INTEGER,
      last_error TEXT,
      last_http_status INTEGER,
      created_at INTEGER NOT NULL
    );
    CREATE INDEX webhook_events_due ON webhook_events(next_attempt_at) WHERE status = 'pending';
    CREATE INDEX webhook_events_account ON webhook_events(account_id, seq);
    CREATE INDEX webhook_events_endpoint_pending ON webhook_events(endpoint_id) WHERE status = 'pending';
    CREATE INDEX webhook_events_age ON webhook_events(created_at);

    CREATE TABLE webhook_attempts (
      id INTEGER PRIMARY KEY,
      event_seq INTEGER NOT NULL REFERENCES webhook_events(seq) ON DELETE CASCADE,
      replay INTEGER NOT NULL,
      at INTEGER NOT NULL,
      duration_ms INTEGER NOT NULL,
      http_status INTEGER,
      error TEXT
    );
    CREATE INDEX webhook_attempts_event ON webhook_attempts(event_seq, id);

    -- How far each consumer has read each outbox topic (rows are not deleted by reading).
    CREATE TABLE outbox_cursors (
      consumer TEXT NOT NULL,
      topic TEXT NOT NULL,
      last_id INTEGER NOT NULL,
      PRIMARY KEY (consumer, topic)
    );
  `,
};
