import type { Migration } from './migration.js';

/**
 * What ingest stores of a message besides its raw bytes (src/core/stored-message.ts), so a
 * read and an IMAP FETCH never parse received content: the text and HTML a read answers,
 * the attachments' places in the raw bytes, the references, why the text came from the
 * bounded fallback if it did (content_json), and the MIME tree with its ENVELOPE
 * (structure_json). `version` is STORED_BODY_VERSION of the builder that wrote the row.
 * text and html hold UTF-8 TEXT, or a BLOB of its raw DEFLATE (src/store/body-encoding.ts);
 * their declared type BLOB gives no affinity, so a text that looks like a number stays text.
 *
 * Messages without a row (stored before this migration, or composed here and stored before
 * a parse worker built theirs) are listed in body_backfill; a worker builds their rows
 * through the parse worker, and a read of one builds it first.
 */
export const messageBodies: Migration = {
  version: 11,
  name: 'message_bodies',
  sql: `
    CREATE TABLE message_bodies (
      message_rowid INTEGER PRIMARY KEY REFERENCES messages(id) ON DELETE CASCADE,
      version INTEGER NOT NULL,
      text BLOB NOT NULL,
      html BLOB,
      content_json TEXT NOT NULL,
      structure_json TEXT NOT NULL
    );
    CREATE TABLE body_backfill (
      message_rowid INTEGER PRIMARY KEY REFERENCES messages(id) ON DELETE CASCADE
    );
    INSERT INTO body_backfill (message_rowid) SELECT id FROM messages;
  `,
};
