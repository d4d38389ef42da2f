import type { Migration } from './migration.js';

/**
 * The full-text index moves to a file of its own (store/search-db.ts), written off the main
 * thread. The old table goes; the new file starts empty, so Store.open queues every stored
 * message for it, and start-up indexes them from their raw bytes before any listener opens.
 */
export const searchFile: Migration = {
  version: 10,
  name: 'search_file',
  sql: `
    DROP TABLE IF EXISTS main.messages_fts;
  `,
};
