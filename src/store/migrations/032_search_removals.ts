import type { Migration } from './migration.js';

/**
 * Messages can now be removed (a draft's copy in Drafts when the draft changes, is sent or is
 * deleted), so the full-text index (its own file) must drop their entries. A removal is a
 * row of search_removals, written in the transaction that removes the message; the indexer
 * hands the writer a blank entry in no folder for each (replacing the entry by row id) and
 * deletes the row once that is durable.
 *
 * Row ids of messages are never used twice: the index, its queue and the indexer's hand-over
 * cursor all key on them. SQLite gives a new row max(id) + 1, which reuses a removed highest
 * id; message_id_floor keeps the highest removed id so new messages take ids above it.
 */
export const searchRemovals: Migration = {
  version: 32,
  name: 'search_removals',
  sql: `
    CREATE TABLE search_removals (
      seq INTEGER PRIMARY KEY,
      message_rowid INTEGER NOT NULL
    );
    CREATE TABLE message_id_floor (
      one INTEGER PRIMARY KEY CHECK (one = 1),
      floor INTEGER NOT NULL
    );
    INSERT INTO message_id_floor (one, floor) VALUES (1, 0);
  `,
};
