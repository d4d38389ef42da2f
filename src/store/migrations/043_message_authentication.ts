import type { Migration } from './migration.js';

/**
 * The authentication verdict of a received message (SPF, DKIM, DMARC, ARC and the trust word,
 * core/authentication.ts) as JSON, written with the message in one transaction. NULL for
 * Sent copies and for mail stored before this version.
 */
export const messageAuthentication: Migration = {
  version: 43,
  name: 'message_authentication',
  sql: `
    ALTER TABLE messages ADD COLUMN authentication_json TEXT;
  `,
};
