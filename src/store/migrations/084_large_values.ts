import type { Migration } from './migration.js';

/**
 * Large values written in pieces before the commit that stores their message
 * (src/store/large-values.ts): the raw bytes and the stored texts of a message over a piece
 * are not written in that commit, which would hold the event loop for as long as SQLite takes
 * to copy them, but one piece per transaction ahead of it. The commit then only names the
 * value (message_raw.raw_value_id, message_bodies.values_json) and marks it attached.
 *
 * - A value not attached within the sweep's grace period was left by a crash or a refused
 *   message before its commit: the sweep removes it.
 * - A value belongs to one row; deleting the row deletes the value and, by cascade, its pieces.
 */
export const largeValues: Migration = {
  version: 84,
  name: 'large_values',
  sql: `
    CREATE TABLE stored_values (
      id INTEGER PRIMARY KEY AUTOINCREMENT,
      size INTEGER NOT NULL,
      piece_size INTEGER NOT NULL,
      created_at INTEGER NOT NULL,
      attached INTEGER NOT NULL DEFAULT 0
    );
    CREATE INDEX stored_values_unattached ON stored_values (created_at) WHERE attached = 0;
    CREATE TABLE stored_pieces (
      value_id INTEGER NOT NULL REFERENCES stored_values(id) ON DELETE CASCADE,
      seq INTEGER NOT NULL,
      piece BLOB NOT NULL,
      PRIMARY KEY (value_id, seq)
    );
    ALTER TABLE message_raw ADD COLUMN raw_value_id INTEGER REFERENCES stored_values(id);
    ALTER TABLE message_bodies ADD COLUMN values_json TEXT;
    CREATE TRIGGER message_raw_value_deleted AFTER DELETE ON message_raw WHEN old.raw_value_id IS NOT NULL
    BEGIN
      DELETE FROM stored_values WHERE id = old.raw_value_id;
    END;
    CREATE TRIGGER message_body_values_deleted AFTER DELETE ON message_bodies WHEN old.values_json IS NOT NULL
    BEGIN
      DELETE FROM stored_values WHERE id IN (SELECT value FROM json_each(old.values_json));
    END;
  `,
};
