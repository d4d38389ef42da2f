import type { Migration } from './migration.js';

/**
 * Sender groups (src/services/sending/send-limits.ts): the domain mailboxes of a holder, the
 * deleted ones too, are found by holder at every send of a grouped account, so that deleting
 * a mailbox never frees what it sent today from the shared daily cap.
 */
export const senderGroups: Migration = {
  version: 77,
  name: 'sender_groups',
  sql: `CREATE INDEX domain_mailboxes_holder_all ON domain_mailboxes(holder_id);`,
};
