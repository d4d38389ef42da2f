import type { Migration } from './migration.js';

/**
 * Outbox ids and event-log sequence numbers are never given twice. Their readers keep a
 * cursor and read "id greater than the cursor": the outbox's consumers (outbox_cursors,
 * persisted) and the event streams (src/services/events/streams.ts, in memory). Without
 * AUTOINCREMENT SQLite gives a new row max(id) + 1, so once the sweep prunes every row (the
 * outbox after a quiet hour, the event log after limits.webhookHistoryDays) ids start again
 * at 1, below every cursor, and nothing new is read until ids pass it again.
 *
 * With AUTOINCREMENT SQLite keeps the highest id ever given in sqlite_sequence (see
 * https://www.sqlite.org/autoinc.html). Both tables are rebuilt with it, keeping their rows
 * and ids; the outbox's sequence starts at least at the highest consumer cursor, so a
 * database whose ids already started again gives its next row an id above every cursor.
 * The event log is rebuilt as migration 52 did it (the attempts first out and last in, so
 * no ON DELETE CASCADE runs; the rename carries the attempts' foreign key to the new table).
 */
export const monotonicIds: Migration = {
  version: 75,
  name: 'monotonic_ids',
  sql: `
    CREATE TABLE outbox_new (
      id INTEGER PRIMARY KEY AUTOINCREMENT,
      topic TEXT NOT NULL,
      payload TEXT NOT NULL,
      created_at INTEGER NOT NULL
    );
    INSERT INTO outbox_new (id, topic, payload, created_at) SELECT id, topic, payload, created_at FROM outbox;
    DROP TABLE outbox;
    ALTER TABLE outbox_new RENAME TO outbox;
    CREATE INDEX outbox_topic ON outbox(topic, id);
    INSERT INTO sqlite_sequence (name, seq) SELECT 'outbox', 0 WHERE NOT EXISTS (SELECT 1 FROM sqlite_sequence WHERE name = 'outbox');
    UPDATE sqlite_sequence SET seq = max(seq, (SELECT coalesce(max(last_id), 0) FROM outbox_cursors)) WHERE name = 'outbox';

    CREATE TABLE webhook_events_new (
      seq INTEGER PRIMARY KEY AUTOINCREMENT,
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
