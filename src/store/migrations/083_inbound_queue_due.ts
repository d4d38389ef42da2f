import type { Migration } from './migration.js';

/**
 * The inbound queue's due times, indexed: the queue runner asks for the earliest after every run,
 * and the status page for the depth and the earliest, while a burst fills the queue. Without
 * the index each was a scan of every queued row; the depth now counts the index's entries.
 */
export const inboundQueueDue: Migration = {
  version: 83,
  name: 'inbound_queue_due',
  sql: 'CREATE INDEX inbound_queue_due ON inbound_queue (due_at);',
};
