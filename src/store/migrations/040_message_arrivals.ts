import type { Migration } from './migration.js';

/**
 * How a message reached the MX: one row per copy stored from an SMTP session, with the TLS
 * version and cipher suite when the session was encrypted (both NULL in the clear). Messages
 * stored another way (sent copies, IMAP APPEND) have no row.
 */
export const messageArrivals: Migration = {
  version: 40,
  name: 'message_arrivals',
  sql: `
    CREATE TABLE message_arrivals (
      message_rowid INTEGER PRIMARY KEY REFERENCES messages(id) ON DELETE CASCADE,
      tls_version TEXT,
      tls_cipher TEXT,
      CHECK ((tls_version IS NULL) = (tls_cipher IS NULL))
    );
  `,
};
