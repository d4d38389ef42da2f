import type { Migration } from './migration.js';

/**
 * The ENVELOPE and BODYSTRUCTURE a FETCH sends, in a narrow table of their own. They were the
 * last columns of message_bodies, after the deflated text and the structure JSON, so an
 * initial sync (UID FETCH 1:* (ENVELOPE BODYSTRUCTURE ...)) read every message's whole body
 * row, and its overflow pages, to reach a few hundred bytes. `version` is the stored-body
 * builder's (src/core/stored-message.ts): a row of an older one counts as missing, as in
 * message_bodies.
 */
export const messageWire: Migration = {
  version: 46,
  name: 'message_wire',
  sql: `
    CREATE TABLE message_wire (
      message_rowid INTEGER PRIMARY KEY REFERENCES messages(id) ON DELETE CASCADE,
      version INTEGER NOT NULL,
      envelope BLOB NOT NULL,
      body_structure BLOB NOT NULL
    );
    INSERT INTO message_wire (message_rowid, version, envelope, body_structure)
      SELECT message_rowid, version, envelope_wire, structure_wire FROM message_bodies
      WHERE envelope_wire IS NOT NULL AND structure_wire IS NOT NULL;
    ALTER TABLE message_bodies DROP COLUMN envelope_wire;
    ALTER TABLE message_bodies DROP COLUMN structure_wire;
  `,
};
