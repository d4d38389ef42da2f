import type { Migration } from './migration.js';

/**
 * The full-text index's work in each node's memory, made durable enough to be taken over
 * (src/services/mail/search-index.ts): a node whose stored mail waits in its memory for the
 * index has a row here, written in the storing transaction, whose `lowest` is at or below every
 * such message's row id, under a lease. When the node has handed everything over, the row goes;
 * when the node dies, its lease runs out and another node indexes every message from `lowest`
 * up again from their raw bytes (at start, a node takes over its own row at once).
 */
export const searchWaiting: Migration = {
  version: 88,
  name: 'search_waiting',
  sql: `
    CREATE TABLE search_waiting (
      node_id TEXT PRIMARY KEY,
      lowest INTEGER NOT NULL,
      lease_until INTEGER NOT NULL
    ) WITHOUT ROWID;
  `,
};
