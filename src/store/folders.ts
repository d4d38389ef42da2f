import type { Folder } from '../core/types.js';
import type { Db } from './db.js';
import { type RankSampleRepo, SINCE_NEWEST_SAMPLE } from './rank-samples.js';
import { Repo } from './repo.js';

const COLUMNS = `id, mailbox_id AS mailboxId, name, uid_validity AS uidValidity, uid_next AS uidNext,
  message_count AS messageCount, highest_modseq AS highestModseq`;

/** A folder with how many of its messages are unseen (REST's folder list, IMAP STATUS UNSEEN). */
export interface FolderCounts extends Folder {
  unseen: number;
}

/** Where a folder stands: its next UID and newest mod-sequence move with every change to it. */
export interface FolderPosition {
  id: number;
  mailboxId: string;
  name: string;
  uidNext: number;
  highestModseq: number;
}

export class FolderRepo extends Repo {
  constructor(
    db: Db,
    private readonly ranks: RankSampleRepo,
  ) {
    super(db);
  }

  create(mailboxId: string, name: string, uidValidity: number, now: number): Folder {
    return this.sql(
      `INSERT INTO folders (mailbox_id, name, uid_validity, created_at) VALUES (?, ?, ?, ?)
         RETURNING ${COLUMNS}`,
    ).get(mailboxId, name, uidValidity, now) as Folder;
  }

  byName(mailboxId: string, name: string): Folder | null {
    const row = this.sql(`SELECT ${COLUMNS} FROM folders WHERE mailbox_id = ? AND name = ?`).get(mailboxId, name) as Folder | undefined;
    return row ?? null;
  }

  byId(id: number): Folder | null {
    return (this.sql(`SELECT ${COLUMNS} FROM folders WHERE id = ?`).get(id) as Folder | undefined) ?? null;
  }

  listOfMailbox(mailboxId: string): Folder[] {
    return this.sql(`SELECT ${COLUMNS} FROM folders WHERE mailbox_id = ? ORDER BY id`).all(mailboxId) as Folder[];
  }

  /** The positions of every folder of these mailboxes (a look for changes other processes committed). */
  positionsOfMailboxes(mailboxIds: readonly string[]): FolderPosition[] {
    return this.sql(
      `SELECT id, mailbox_id AS mailboxId, name, uid_next AS uidNext, highest_modseq AS highestModseq
       FROM folders WHERE mailbox_id IN (SELECT value FROM json_each(?))`,
    ).all(JSON.stringify(mailboxIds)) as FolderPosition[];
  }

  /** Every folder with its unseen count, in one pass over the unseen messages. */
  countsOfMailbox(mailboxId: string): FolderCounts[] {
    return this.sql(
      `SELECT ${COLUMNS}, (SELECT count(*) FROM messages m WHERE m.folder_id = folders.id AND m.seen = 0) AS unseen
       FROM folders WHERE mailbox_id = ? ORDER BY id`,
    ).all(mailboxId) as FolderCounts[];
  }

  /**
   * Takes the next UID and the next mod-sequence and counts the message, in one statement.
   * UIDs only grow and are never reused (RFC 3501 section 2.3.1.1), because uid_next is never
   * lowered; they are dense and in commit order across processes, because the UPDATE takes
   * the folder's next UID under the write lock its transaction holds from BEGIN IMMEDIATE
   * (docs/design.md, "Several processes: wake-ups and exactness"), and a store that locks rows
   * instead of the database gets the same from the one statement.
   *
   * RETURNING runs as a trigger and opens a statement savepoint; that cost a segment of the
   * full-text index per message while FTS5 lived in this database, no longer since the index
   * has its own file (migration 010, search-db.ts).
   *
   * Every `spacing`-th message stored since the folder's newest rank sample becomes a sample
   * (rank-samples.ts): it has the highest UID, so every counted message is below it. The check
   * rides on the statement this already makes (the counts there are after this message).
   */
  allocateUid(folderId: number): { uid: number; modseq: number } {
    const next = this.sql(
      `UPDATE folders SET uid_next = uid_next + 1, message_count = message_count + 1, highest_modseq = highest_modseq + 1 WHERE id = ?
       RETURNING uid_next - 1 AS uid, highest_modseq AS modseq, message_count - 1 AS count, ${SINCE_NEWEST_SAMPLE} - 1 AS since`,
    ).get(folderId) as { uid: number; modseq: number; count: number; since: number };
    if (next.since >= this.ranks.spacing) this.ranks.add(folderId, next.uid, next.count);
    return { uid: next.uid, modseq: next.modseq };
  }

  /** A new mod-sequence for one change of the folder (RFC 7162 section 3.1.1); inside a transaction. */
  nextModseq(folderId: number): number {
    return this.sql('UPDATE folders SET highest_modseq = highest_modseq + 1 WHERE id = ? RETURNING highest_modseq').pluck().get(folderId) as number;
  }

  /**
   * RFC 3501 section 2.3.2: the UIDs above the folder's mark are \Recent to the first session
   * that takes them, which raises the mark. Returns the mark as it was.
   */
  takeRecent(folderId: number, upToUid: number): number {
    const before = this.sql('SELECT recent_uid FROM folders WHERE id = ?').pluck().get(folderId) as number;
    if (upToUid > before) this.sql('UPDATE folders SET recent_uid = ? WHERE id = ?').run(upToUid, folderId);
    return before;
  }

  recentMark(folderId: number): number {
    return this.sql('SELECT recent_uid FROM folders WHERE id = ?').pluck().get(folderId) as number;
  }

  rename(folderId: number, name: string): void {
    this.sql('UPDATE folders SET name = ? WHERE id = ?').run(name, folderId);
  }

  setUidValidity(folderId: number, uidValidity: number): void {
    this.sql('UPDATE folders SET uid_validity = ? WHERE id = ?').run(uidValidity, folderId);
  }

  /** Drops an empty folder (its messages are removed first); its expunge history, keywords and rank samples go with it. */
  delete(folderId: number): void {
    this.sql('DELETE FROM folders WHERE id = ?').run(folderId);
  }

  /** Records the UIDVALIDITY a name last had, when its folder is deleted or renamed away. */
  retire(mailboxId: string, name: string, uidValidity: number): void {
    this.sql(
      `INSERT INTO retired_folders (mailbox_id, name, uid_validity) VALUES (?, ?, ?)
       ON CONFLICT (mailbox_id, name) DO UPDATE SET uid_validity = max(uid_validity, excluded.uid_validity)`,
    ).run(mailboxId, name, uidValidity);
  }

  retiredUidValidity(mailboxId: string, name: string): number | null {
    return (this.sql('SELECT uid_validity FROM retired_folders WHERE mailbox_id = ? AND name = ?').pluck().get(mailboxId, name) as number | undefined) ?? null;
  }

  /** Keywords used in the folder (the FLAGS response lists them, RFC 3501 section 7.2.6). */
  keywords(folderId: number): string[] {
    return this.sql('SELECT keyword FROM folder_keywords WHERE folder_id = ? ORDER BY keyword').pluck().all(folderId) as string[];
  }

  addKeywords(folderId: number, keywords: readonly string[]): void {
    for (const keyword of keywords) this.sql('INSERT OR IGNORE INTO folder_keywords (folder_id, keyword) VALUES (?, ?)').run(folderId, keyword);
  }

  subscriptions(mailboxId: string): string[] {
    return this.sql('SELECT name FROM subscriptions WHERE mailbox_id = ? ORDER BY name').pluck().all(mailboxId) as string[];
  }

  subscribe(mailboxId: string, name: string): void {
    this.sql('INSERT OR IGNORE INTO subscriptions (mailbox_id, name) VALUES (?, ?)').run(mailboxId, name);
  }

  unsubscribe(mailboxId: string, name: string): boolean {
    return this.sql('DELETE FROM subscriptions WHERE mailbox_id = ? AND name = ?').run(mailboxId, name).changes > 0;
  }
}
