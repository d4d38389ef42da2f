import type { Db } from './db.js';
import { addressesOf, type AddressColumns } from './address-columns.js';
import type { AuthenticationVerdict } from '../core/authentication.js';
import type { JunkVerdict } from '../core/junk.js';
import type { StagedValues, StoredBody } from '../core/stored-message.js';
import type { AddressEntry, AttachmentMeta, Folder, MessageFlags, MessageSummary } from '../core/types.js';
import type { MessageBodyRepo } from './message-bodies.js';
import type { MessageRawRepo } from './message-raw.js';
import type { RankSampleRepo } from './rank-samples.js';
import { Repo } from './repo.js';
import { inFolder, inFolders, type SearchIndexReader } from './search-db.js';
import type { SearchText, SearchIndexRepo } from './search-index.js';

export interface NewMessage {
  folderId: number;
  uid: number;
  messageId: string | null;
  inReplyTo: string | null;
  subject: string;
  from: AddressEntry | null;
  to: AddressEntry[];
  cc: AddressEntry[];
  date: number | null;
  preview: string;
  size: number;
  attachments: AttachmentMeta[];
  encrypted: boolean;
  flags: MessageFlags;
  /** Its mod-sequence in the folder (RFC 7162), taken with its UID. */
  modseq: number;
  receivedAt: number;
  raw: Buffer;
  /** What of it was written ahead of this commit (Store.stage): those parts are named, not written. */
  staged?: StagedValues;
  /** Text for the full-text index, queued with the message. */
  searchText: SearchText;
  /** What a read and IMAP FETCH answer from; null lists the message for the body backfill. */
  body: StoredBody | null;
  /** Null when threads are off (threads.enabled). */
  threadId: number | null;
  /** Received mail's verdict; omitted for Sent copies. */
  authentication?: AuthenticationVerdict;
  /** The junk filter's verdict on received mail; omitted for mail it did not judge. */
  junk?: JunkVerdict;
}

interface SummaryRow extends AddressColumns {
  id: number;
  uid: number;
  message_id: string | null;
  subject: string;
  date: number | null;
  preview: string;
  size: number;
  attachments_json: string;
  encrypted: number;
  seen: number;
  flagged: number;
  thread_id: number | null;
  authentication_json: string | null;
  junk_json: string | null;
  keywords: string | null;
}

const SUMMARY_COLUMNS = `m.id, m.uid, m.message_id, m.subject, m.from_json, m.to_json, m.cc_json, m.date,
  m.preview, m.size, m.attachments_json, m.encrypted, m.seen, m.flagged, m.thread_id, m.authentication_json, m.junk_json, m.keywords`;

const toSummary = (row: SummaryRow): MessageSummary => ({
  rowId: row.id,
  uid: row.uid,
  messageId: row.message_id,
  subject: row.subject,
  ...addressesOf(row),
  date: row.date,
  preview: row.preview,
  size: row.size,
  attachments: JSON.parse(row.attachments_json) as AttachmentMeta[],
  encrypted: row.encrypted === 1,
  seen: row.seen === 1,
  flagged: row.flagged === 1,
  threadId: row.thread_id,
  authentication: row.authentication_json === null ? null : (JSON.parse(row.authentication_json) as AuthenticationVerdict),
  junk: row.junk_json === null ? null : (JSON.parse(row.junk_json) as JunkVerdict),
  keywords: keywordsOf(row.keywords),
});

/** What a full read shows of the message row. */
export type FullSummary = MessageSummary & { inReplyTo: string | null; answered: boolean; deleted: boolean; draft: boolean };

export interface ThreadMessage extends MessageSummary {
  receivedAt: number;
  folder: string;
  uidValidity: number;
}

export interface MessagePage {
  total: number;
  items: MessageSummary[];
}

export class MessageRepo extends Repo {
  constructor(
    db: Db,
    private readonly searchIndex: SearchIndexRepo,
    private readonly index: SearchIndexReader,
    private readonly bodies: MessageBodyRepo,
    private readonly ranks: RankSampleRepo,
    private readonly raws: MessageRawRepo,
  ) {
    super(db);
  }

  insert(message: NewMessage): number {
    const { flags } = message;
    const { lastInsertRowid } = this.sql(
      `INSERT INTO messages (id, folder_id, uid, message_id, in_reply_to, subject, from_json, to_json, cc_json,
         date, preview, size, attachments_json, encrypted, seen, flagged, answered, deleted, draft, keywords, modseq, received_at, thread_id, authentication_json, junk_json)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    ).run(
      this.nextId(),
      message.folderId,
      message.uid,
      message.messageId,
      message.inReplyTo,
      message.subject,
      message.from ? JSON.stringify(message.from) : null,
      JSON.stringify(message.to),
      JSON.stringify(message.cc),
      message.date,
      message.preview,
      message.size,
      JSON.stringify(message.attachments),
      message.encrypted ? 1 : 0,
      bit(flags.seen),
      bit(flags.flagged),
      bit(flags.answered),
      bit(flags.deleted),
      bit(flags.draft),
      keywordsColumn(flags.keywords),
      message.modseq,
      message.receivedAt,
      message.threadId,
      message.authentication ? JSON.stringify(message.authentication) : null,
      message.junk ? JSON.stringify(message.junk) : null,
    );
    const rowId = Number(lastInsertRowid);
    this.raws.insert(rowId, message.raw, message.staged?.raw);
    this.searchIndex.queue(rowId, message.folderId, message.searchText);
    if (message.body) this.bodies.insert(rowId, message.body, message.staged?.texts);
    else this.bodies.queueBackfill(rowId);
    return rowId;
  }

  /**
   * Newest first, with the folder's stored count as the total: read the folder in the same
   * Store.read, so the count and the page come from one snapshot. UIDs are paged through the
   * (folder_id, uid) index before any row is read, from whichever start skips fewer entries
   * (RankSampleRepo.walk).
   */
  page(folder: Pick<Folder, 'id' | 'messageCount'>, limit: number, offset: number): MessagePage {
    const { id: folderId, messageCount: total } = folder;
    const walk = this.ranks.walk(folderId, total, limit, offset);
    if (!walk) return { total, items: [] };
    const rows = this.sql(
      `SELECT ${SUMMARY_COLUMNS} FROM messages m
       WHERE m.id IN (SELECT id FROM messages WHERE folder_id = ? AND uid >= ? ORDER BY uid ${walk.newestFirst ? 'DESC' : 'ASC'} LIMIT ? OFFSET ?)
       ORDER BY m.uid DESC`,
    ).all(folderId, walk.fromUid, walk.take, walk.skip) as SummaryRow[];
    return { total, items: rows.map(toSummary) };
  }

  /**
   * `match` is an FTS5 query built by the caller; the index itself keeps it to the folder.
   * Within a folder, row ids grow with UIDs (both are taken when a message is stored, and
   * messages never move), so the index's rowid order is the folder's UID order.
   */
  search(folderId: number, match: string, limit: number, offset: number): MessagePage {
    const { total, ids } = this.index.page(inFolder(folderId, match), limit, offset);
    if (ids.length === 0) return { total, items: [] };
    const rows = this.sql(`SELECT ${SUMMARY_COLUMNS} FROM messages m WHERE m.id IN (SELECT value FROM json_each(?)) ORDER BY m.uid DESC`).all(
      JSON.stringify(ids),
    ) as SummaryRow[];
    return { total, items: rows.map(toSummary) };
  }

  /** Messages above a UID, oldest first (what arrived after an agent last looked). */
  afterUid(folderId: number, uid: number, limit: number): MessageSummary[] {
    const rows = this.sql(`SELECT ${SUMMARY_COLUMNS} FROM messages m WHERE m.folder_id = ? AND m.uid > ? ORDER BY m.uid LIMIT ?`).all(
      folderId,
      uid,
      limit,
    ) as SummaryRow[];
    return rows.map(toSummary);
  }

  /** The row ids of every message in these folders that the FTS5 query `match` finds. */
  searchRowIds(folderIds: readonly number[], match: string): number[] {
    return folderIds.length === 0 ? [] : this.index.all(inFolders(folderIds, match));
  }

  /** The list columns of one message, its In-Reply-To and its other IMAP flags, without its raw bytes. */
  summaryByUid(folderId: number, uid: number): FullSummary | null {
    const row = this.sql(`SELECT ${SUMMARY_COLUMNS}, m.in_reply_to, m.answered, m.deleted, m.draft FROM messages m WHERE m.folder_id = ? AND m.uid = ?`).get(
      folderId,
      uid,
    ) as (SummaryRow & { in_reply_to: string | null; answered: number; deleted: number; draft: number }) | undefined;
    if (!row) return null;
    return {
      ...toSummary(row),
      inReplyTo: row.in_reply_to,
      answered: row.answered === 1,
      deleted: row.deleted === 1,
      draft: row.draft === 1,
    };
  }

  /**
   * The messages of a thread in every folder, oldest first (arrival, then row), after the
   * cursor (the last message of the previous page), with the folder each is in.
   */
  inThread(threadId: number, after: { receivedAt: number; rowId: number } | null, limit: number): ThreadMessage[] {
    const from = after ?? { receivedAt: -1, rowId: -1 };
    const rows = this.sql(
      `SELECT ${SUMMARY_COLUMNS}, m.received_at, f.name AS folder, f.uid_validity FROM messages m JOIN folders f ON f.id = m.folder_id
       WHERE m.thread_id = ? AND (m.received_at > ? OR (m.received_at = ? AND m.id > ?))
       ORDER BY m.received_at, m.id LIMIT ?`,
    ).all(threadId, from.receivedAt, from.receivedAt, from.rowId, limit) as (SummaryRow & { received_at: number; folder: string; uid_validity: number })[];
    return rows.map((row) => ({ ...toSummary(row), receivedAt: row.received_at, folder: row.folder, uidValidity: row.uid_validity }));
  }

  /**
   * A copy of a stored message in another folder (IMAP COPY and MOVE, RFC 3501 section 6.4.7:
   * flags, internal date and thread kept), under a new row id above every other, with its raw bytes
   * and stored body copied inside SQLite. The caller has taken `uid` and `modseq` of the
   * target folder; `searchText` queues it for the index (null: indexed again from its bytes).
   */
  copy(rowId: number, folderId: number, uid: number, modseq: number, searchText: SearchText | null): number {
    const copied = this.nextId();
    this.sql(
      `INSERT INTO messages (id, folder_id, uid, message_id, in_reply_to, subject, from_json, to_json, cc_json,
         date, preview, size, attachments_json, encrypted, seen, flagged, answered, deleted, draft, keywords, modseq, received_at, thread_id, authentication_json, junk_json)
       SELECT ?, ?, ?, message_id, in_reply_to, subject, from_json, to_json, cc_json,
         date, preview, size, attachments_json, encrypted, seen, flagged, answered, deleted, draft, keywords, ?, received_at, thread_id, authentication_json, junk_json
       FROM messages WHERE id = ?`,
    ).run(copied, folderId, uid, modseq, rowId);
    this.raws.copy(rowId, copied);
    // How it reached the MX (migration 40) holds for its copies too.
    this.sql(
      'INSERT INTO message_arrivals (message_rowid, tls_version, tls_cipher) SELECT ?, tls_version, tls_cipher FROM message_arrivals WHERE message_rowid = ?',
    ).run(copied, rowId);
    if (!this.bodies.copy(rowId, copied)) this.bodies.queueBackfill(copied);
    if (searchText) this.searchIndex.queue(copied, folderId, searchText);
    else this.searchIndex.backfill(copied);
    return copied;
  }

  /**
   * Removes messages for good (IMAP's expunge, RFC 3501 section 2.3.1.1: a UID is never used
   * again); inside a transaction. Returns the UIDs that were there, ascending; the folder's rank
   * samples are lowered once for all of them, so a large expunge costs one update per stretch
   * between samples, not one per message.
   */
  remove(folderId: number, uids: readonly number[], modseq: number): number[] {
    const removed = [...new Set(uids)].sort((a, b) => a - b).filter((uid) => this.removeOne(folderId, uid, modseq));
    this.ranks.removed(folderId, removed);
    return removed;
  }

  /**
   * The row, its raw bytes (ON DELETE CASCADE), one off the folder's count, and its full-text
   * entry (SearchIndexRepo.forget). The UID is kept with the expunge's mod-sequence for QRESYNC
   * (RFC 7162 section 3.2.10). False when absent.
   */
  private removeOne(folderId: number, uid: number, modseq: number): boolean {
    const rowId = this.sql('SELECT id FROM messages WHERE folder_id = ? AND uid = ?').pluck().get(folderId, uid) as number | undefined;
    if (rowId === undefined) return false;
    this.sql('DELETE FROM messages WHERE id = ?').run(rowId);
    this.sql('INSERT OR REPLACE INTO expunged (folder_id, uid, modseq) VALUES (?, ?, ?)').run(folderId, uid, modseq);
    this.sql('UPDATE folders SET message_count = message_count - 1 WHERE id = ?').run(folderId);
    this.sql('UPDATE message_id_floor SET floor = max(floor, ?)').run(rowId);
    this.searchIndex.forget(rowId);
    return true;
  }

  /**
   * The next row id: above every stored and every removed message (message_id_floor, migration
   * 032), so none is used twice. Read in the inserting transaction, never kept in memory: another
   * process may have removed the newest message since (docs/design.md, "Several processes on one store").
   */
  private nextId(): number {
    return this.sql('SELECT max((SELECT floor FROM message_id_floor), coalesce((SELECT max(id) FROM messages), 0)) + 1').pluck().get() as number;
  }
}

const bit = (value: boolean): number => (value ? 1 : 0);

/** Keywords as one column: space-separated (a keyword is an atom, RFC 3501 section 9), NULL when none. */
export const keywordsColumn = (keywords: readonly string[]): string | null => (keywords.length === 0 ? null : keywords.join(' '));

export const keywordsOf = (column: string | null): string[] => (column === null ? [] : column.split(' '));
