import type { Migration } from './migration.js';

/**
 * What mail clients keep on a server over IMAP (RFC 3501 and its extensions):
 *
 * - every system flag and keywords per message (answered, deleted, draft beside seen and
 *   flagged; keywords space-separated, NULL when none), and the keywords a folder has seen
 *   (folder_keywords: the FLAGS response lists them);
 * - mod-sequences (RFC 7162 CONDSTORE): each message's `modseq`, raised by every change of
 *   its flags, and the folder's `highest_modseq`; expunged UIDs with the mod-sequence of
 *   their expunge, so a client resynchronizes with QRESYNC's VANISHED (EARLIER);
 * - `recent_uid`: messages above it are \Recent to the next session that selects the
 *   folder (RFC 3501 section 2.3.2), which raises it; existing mail is not recent;
 * - subscriptions by name (RFC 3501 section 6.3.6: a name can be subscribed while it does not
 *   exist); every existing folder starts subscribed;
 * - retired_folders: the UIDVALIDITY a deleted or renamed-away name last had, so the next
 *   folder of that name gets a greater one (RFC 3501 section 2.3.1.1);
 * - ENVELOPE and BODYSTRUCTURE in IMAP's notation beside the stored structure, written by
 *   the stored-body builder of version 2; bodies of version 1 are rebuilt by the backfill.
 */
export const imapState: Migration = {
  version: 45,
  name: 'imap_state',
  sql: `
    ALTER TABLE messages ADD COLUMN answered INTEGER NOT NULL DEFAULT 0;
    ALTER TABLE messages ADD COLUMN deleted INTEGER NOT NULL DEFAULT 0;
    ALTER TABLE messages ADD COLUMN draft INTEGER NOT NULL DEFAULT 0;
    ALTER TABLE messages ADD COLUMN keywords TEXT;
    ALTER TABLE messages ADD COLUMN modseq INTEGER NOT NULL DEFAULT 1;
    CREATE INDEX messages_folder_modseq ON messages(folder_id, modseq);

    ALTER TABLE folders ADD COLUMN highest_modseq INTEGER NOT NULL DEFAULT 1;
    ALTER TABLE folders ADD COLUMN recent_uid INTEGER NOT NULL DEFAULT 0;
    UPDATE folders SET recent_uid = uid_next - 1;

    CREATE TABLE folder_keywords (
      folder_id INTEGER NOT NULL REFERENCES folders(id) ON DELETE CASCADE,
      keyword TEXT NOT NULL,
      PRIMARY KEY (folder_id, keyword)
    ) WITHOUT ROWID;

    CREATE TABLE expunged (
      folder_id INTEGER NOT NULL REFERENCES folders(id) ON DELETE CASCADE,
      uid INTEGER NOT NULL,
      modseq INTEGER NOT NULL,
      PRIMARY KEY (folder_id, uid)
    ) WITHOUT ROWID;
    CREATE INDEX expunged_modseq ON expunged(folder_id, modseq);

    CREATE TABLE subscriptions (
      mailbox_id TEXT NOT NULL REFERENCES mailboxes(id),
      name TEXT NOT NULL,
      PRIMARY KEY (mailbox_id, name)
    ) WITHOUT ROWID;
    INSERT INTO subscriptions (mailbox_id, name) SELECT mailbox_id, name FROM folders;

    CREATE TABLE retired_folders (
      mailbox_id TEXT NOT NULL REFERENCES mailboxes(id),
      name TEXT NOT NULL,
      uid_validity INTEGER NOT NULL,
      PRIMARY KEY (mailbox_id, name)
    ) WITHOUT ROWID;

    ALTER TABLE message_bodies ADD COLUMN envelope_wire BLOB;
    ALTER TABLE message_bodies ADD COLUMN structure_wire BLOB;
    INSERT OR IGNORE INTO body_backfill (message_rowid) SELECT message_rowid FROM message_bodies WHERE version < 2;
  `,
};
