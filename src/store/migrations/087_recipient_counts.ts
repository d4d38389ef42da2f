import type { Migration } from './migration.js';

/**
 * Charged recipients counted as they are inserted, for the sending limits
 * (src/store/recipient-counts.ts): per account and day (the day's start in the service's time
 * zone), and per account and second for the sliding minute. The limits counted the rows of
 * `submission_recipients` on every send instead, a walk of every recipient of the day: its cost
 * grew with the account's volume.
 *
 * A day's count starts from the rows already there when its first recipient is counted, so
 * nothing needs copying here; the seconds of the last two minutes are.
 */
export const recipientCounts: Migration = {
  version: 87,
  name: 'recipient_counts',
  sql: `
    CREATE TABLE recipient_day_counts (
      account_id TEXT NOT NULL,
      day_start INTEGER NOT NULL,
      recipients INTEGER NOT NULL,
      PRIMARY KEY (account_id, day_start)
    ) WITHOUT ROWID;
    CREATE TABLE recipient_second_counts (
      account_id TEXT NOT NULL,
      second INTEGER NOT NULL,
      recipients INTEGER NOT NULL,
      PRIMARY KEY (account_id, second)
    ) WITHOUT ROWID;
    INSERT INTO recipient_second_counts (account_id, second, recipients)
      SELECT account_id, created_at / 1000, count(*) FROM submission_recipients
      WHERE credit_reserved = 1 AND created_at >= (CAST(strftime('%s', 'now') AS INTEGER) - 120) * 1000
      GROUP BY account_id, created_at / 1000;
  `,
};
