import type { Migration } from './migration.js';

/**
 * Charged recipients per account by creation time, as a partial index, for the send path: the
 * daily and per-minute recipient counts that every send's accept transaction makes read
 * only index entries, not one table row per recipient. It replaces the index on all rows,
 * whose every query also asks for credit_reserved = 1.
 */
export const sendPath: Migration = {
  version: 8,
  name: 'send_path',
  sql: `
    CREATE INDEX submission_recipients_account_charged ON submission_recipients(account_id, created_at)
      WHERE credit_reserved = 1;
    DROP INDEX submission_recipients_account_day;
  `,
};
