import type { Migration } from './migration.js';

/**
 * The search queue keeps only which messages wait for the index; their text stays in the
 * process's memory until indexed (SearchIndexRepo). Writing each message's text into the queue
 * and deleting it soon after was a large part of the WAL written per stored message
 * (docs/contributing/benchmarks.md), and the ingest rate followed the bytes written. Rows queued
 * by an earlier version go to the backfill, which start-up indexes from the raw bytes.
 */
export const searchQueueIds: Migration = {
  version: 9,
  name: 'search_queue_ids',
  sql: `
    INSERT OR IGNORE INTO search_backfill (message_rowid) SELECT message_rowid FROM search_queue;
    DROP TABLE search_queue;
    CREATE TABLE search_queue (
      message_rowid INTEGER PRIMARY KEY,
      folder_id INTEGER NOT NULL
    );
  `,
};
