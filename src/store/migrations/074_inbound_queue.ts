import type { Migration } from './migration.js';

/**
 * Mail the MX accepted during a burst and has not delivered into its mailboxes yet
 * (src/store/inbound-queue.ts): the envelope and the raw bytes, committed before 250, and
 * deleted in the transaction that stores the copies. `due_at` is `received_at` until a failed
 * delivery holds the message back.
 */
export const inboundQueue: Migration = {
  version: 74,
  name: 'inbound_queue',
  sql: `
    CREATE TABLE inbound_queue (
      id INTEGER PRIMARY KEY,
      received_at INTEGER NOT NULL,
      envelope TEXT NOT NULL,
      raw BLOB NOT NULL,
      attempts INTEGER NOT NULL DEFAULT 0,
      due_at INTEGER NOT NULL
    );
  `,
};
