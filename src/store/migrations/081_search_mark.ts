import type { Migration } from './migration.js';

/**
 * The full-text index keeps its own mark of how far it got (src/store/search-db.ts), and a
 * stored message's text goes to it from memory: the queue table is gone. Messages it held (not
 * indexed when the last version stopped) are listed for the backfill, which indexes them from
 * their raw bytes; so every message is indexed or listed, and the next start sets the mark.
 */
export const searchMark: Migration = {
  version: 81,
  name: 'search_mark',
  sql: `
    INSERT OR IGNORE INTO search_backfill (message_rowid) SELECT message_rowid FROM search_queue;
    DROP TABLE search_queue;
  `,
};
