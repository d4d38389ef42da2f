import type { Migration } from './migration.js';

/**
 * The full-text index, scoped by folder and fed from a queue.
 *
 * - A `folder` column (token `f<folder id>`) lets FTS5 itself restrict a search to one
 *   folder: counting the matches of a word found in all 100,000 messages of a folder took
 *   a lookup of every hit in `messages`; now it is an intersection of two doclists.
 * - Porter stemming over unicode61: searches match whole words and their English
 *   inflections; a prefix is asked for explicitly (`quart*`), because prefix terms make
 *   FTS5 merge the doclists of every word they match (see toFtsQuery).
 * - Stored mail is queued in `search_queue` and moved into the index in batches
 *   (SearchIndexService): FTS5 writes a new segment, and merges, at every commit, which
 *   cost an ingest batch more than the rest of its work.
 *
 * The old index held no folder column and cannot be rebuilt from itself (contentless), so
 * every stored message goes into `search_backfill`, which start-up re-indexes from the raw
 * bytes before any listener opens.
 */
export const searchIndex: Migration = {
  version: 7,
  name: 'search_index',
  sql: `
    DROP TABLE messages_fts;
    CREATE VIRTUAL TABLE messages_fts USING fts5(
      folder, subject, participants, body,
      content = '', contentless_delete = 1,
      tokenize = 'porter unicode61 remove_diacritics 2'
    );

    CREATE TABLE search_queue (
      message_rowid INTEGER PRIMARY KEY,
      folder_id INTEGER NOT NULL,
      subject TEXT NOT NULL,
      participants TEXT NOT NULL,
      body TEXT NOT NULL
    );

    CREATE TABLE search_backfill (message_rowid INTEGER PRIMARY KEY);
    INSERT INTO search_backfill (message_rowid) SELECT id FROM messages;
  `,
};
