import type { Migration } from './migration.js';

/**
 * The new text of each message (StoredContent.extractedText and extractedHtml, stored body
 * version 3): packed like text and html (src/store/body-encoding.ts), NULL when equal to
 * them (a message that quotes nothing). Bodies of older versions lack them: they are listed for
 * the backfill, which builds them again through the parse workers.
 */
export const extractedText: Migration = {
  version: 50,
  name: 'extracted_text',
  sql: `
    ALTER TABLE message_bodies ADD COLUMN extracted_text BLOB;
    ALTER TABLE message_bodies ADD COLUMN extracted_html BLOB;
    INSERT OR IGNORE INTO body_backfill (message_rowid) SELECT message_rowid FROM message_bodies WHERE version < 3;
  `,
};
