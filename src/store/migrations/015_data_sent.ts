import type { Migration } from './migration.js';

/**
 * `submission_recipients.data_sent_at`: set, durably, the moment the next server has answered
 * DATA with 354 and before the first byte of the message goes out. A claim left by a crashed
 * process is then settled by what really happened: with data_sent_at the message may have
 * been accepted, so the recipient becomes `unresolved`; without it nothing was handed over,
 * so the claim is dropped and the recipient goes back to the queue. Cleared with the claim.
 */
export const dataSent: Migration = {
  version: 15,
  name: 'data_sent',
  sql: `
    ALTER TABLE submission_recipients ADD COLUMN data_sent_at INTEGER;
  `,
};
