import type { Migration } from './migration.js';

/**
 * The account's event log: webhook_events holds every event of an account, also when no
 * webhook endpoint takes it, so the event stream (GET /api/v1/agent/events) serves the same
 * events with the same ids as the webhooks, and resumes from any of them kept in the last
 * 30 days. An event no webhook takes has no endpoint and no delivery status (both NULL).
 *
 * SQLite cannot drop NOT NULL in place: both tables are rebuilt (the attempts first out and
 * last in, so no ON DELETE CASCADE runs), and the renames carry the attempts' foreign key to
 * the new table.
 */
export const eventLog: Migration = {
  version: 52,
  name: 'event_log',
  sql: `
    CREATE TABLE webhook_events_new (
      seq INTEGER PRIMARY KEY,
      id TEXT NOT NULL UNIQUE,
      account_id TEXT NOT NULL,
      endpoint_id TEXT REFERENCES webhook_endpoints(id),
      type TEXT NOT NULL,
      body TEXT NOT NULL,
      status TEXT CHECK (status IN ('pending', 'delivered', 'failed', 'cancelled')),
      attempts INTEGER NOT NULL DEFAULT 0,
      replays INTEGER NOT NULL DEFAULT 0,
      next_attempt_at INTEGER,
      last_attempt_at INTEGER,
      last_error TEXT,
      last_http_status INTEGER,
      created_at INTEGER NOT NULL,
      CHECK ((endpoint_id IS NULL) = (status IS NULL))
    );
    INSERT INTO webhook_events_new SELECT seq, id, account_id, endpoint_id, type, body, status, attempts, replays,
      next_attempt_at, last_attempt_at, last_error, last_http_status, created_at FROM webhook_events;

    CREATE TABLE webhook_attempts_new (
      id INTEGER PRIMARY KEY,
      event_seq INTEGER NOT NULL REFERENCES webhook_events_new(seq) ON DELETE CASCADE,
      replay INTEGER NOT NULL,
      at INTEGER NOT NULL,
      duration_ms INTEGER NOT NULL,
      http_status INTEGER,
      error TEXT
    );
    INSERT INTO webhook_attempts_new SELECT id, event_seq, replay, at, duration_ms, http_status, error FROM webhook_attempts;

    DROP TABLE webhook_attempts;
    DROP TABLE webhook_events;
    ALTER TABLE webhook_events_new RENAME TO webhook_events;
    ALTER TABLE webhook_attempts_new RENAME TO webhook_attempts;

    CREATE INDEX webhook_events_due ON webhook_events(next_attempt_at) WHERE status = 'pending';
    CREATE INDEX webhook_events_account ON webhook_events(account_id, seq);
    CREATE INDEX webhook_events_endpoint_pending ON webhook_events(endpoint_id) WHERE status = 'pending';
    CREATE INDEX webhook_events_age ON webhook_events(created_at);
    CREATE INDEX webhook_attempts_event ON webhook_attempts(event_seq, id);
  `,
};
