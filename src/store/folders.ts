import type { Folder } from '../core/types.js';
import { Repo } from './repo.js';

const COLUMNS = `id, mailbox_id AS mailboxId, name, uid_validity AS uidValidity, uid_next AS uidNext,
  message_count AS messageCount`;

export class FolderRepo extends Repo {

  create(mailboxId: string, name: string, uidValidity: number, now: number): Folder {
    return this.sql(
        `INSERT INTO folders (mailbox_id, name, uid_validity, created_at) VALUES (?, ?, ?, ?)
         RETURNING ${COLUMNS}`,
      )
      .get(mailboxId, name, uidValidity, now) as Folder;
  }

  byName(mailboxId: string, name: string): Folder | null {
    const row = this.sql(`SELECT ${COLUMNS} FROM folders WHERE mailbox_id = ? AND name = ?`)
      .get(mailboxId, name) as Folder | undefined;
    return row ?? null;
  }

  listOfMailbox(mailboxId: string): Folder[] {
    return this.sql(`SELECT ${COLUMNS} FROM folders WHERE mailbox_id = ? ORDER BY id`).all(mailboxId) as Folder[];
  }

  /**
   * Takes the next UID and counts the message. UIDs only grow and are never reused
   * (RFC 3501 section 2.3.1.1), because uid_next is never lowered. Must run inside a
   * transaction, which makes the read and the update one step.
   *
   * No RETURNING here: SQLite runs RETURNING as a trigger, so the UPDATE would open a
   * statement savepoint, and FTS5 writes its pending index to disk at every savepoint: with
   * the full-text insert of the previous message in the same batch, that made one index
   * segment per message (about 100 us each, and more merging at commit).
   */
  allocateUid(folderId: number): number {
    const { uidNext } = this.sql('SELECT uid_next AS uidNext FROM folders WHERE id = ?').get(folderId) as { uidNext: number };
    this.sql('UPDATE folders SET uid_next = uid_next + 1, message_count = message_count + 1 WHERE id = ?').run(folderId);
    return uidNext;
  }
}
