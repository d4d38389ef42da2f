import type { Db } from './db.js';
import { addressesOf, type AddressColumns } from './address-columns.js';
import type { StoredBody } from '../core/stored-message.js';
import type { AddressEntry, AttachmentMeta, MessageSummary } from '../core/types.js';
import type { MessageBodyRepo } from './message-bodies.js';
import { Repo } from './repo.js';
import { inFolder, type SearchIndexReader } from './search-db.js';
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
  seen: boolean;
  receivedAt: number;
  raw: Buffer;
  /** Text for the full-text index, queued with the message. */
  searchText: SearchText;
  /** What a read and IMAP FETCH answer from; null lists the message for the body backfill. */
  body: StoredBody | null;
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
}

const SUMMARY_COLUMNS = `m.id, m.uid, m.message_id, m.subject, m.from_json, m.to_json, m.cc_json, m.date,
  m.preview, m.size, m.attachments_json, m.encrypted, m.seen, m.flagged`;

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
});

export interface MessagePage {
  total: number;
  items: MessageSummary[];
}

export class MessageRepo extends Repo {
  /**
   * The highest row id a removed message had, while it may be above every stored one (migration
   * 032): new rows then take ids above it, so no row id is used twice. Null in the usual case,
   * where SQLite's own max(id) + 1 is already above it.
   */
  private idFloor: number | null;

  constructor(
    db: Db,
    private readonly searchIndex: SearchIndexRepo,
    private readonly index: SearchIndexReader,
    private readonly bodies: MessageBodyRepo,
  ) {
    super(db);
    const floor = this.sql('SELECT floor FROM message_id_floor').pluck().get() as number;
    this.idFloor = floor > this.maxId() ? floor : null;
  }

  insert(message: NewMessage): number {
    // Kept once set (a rolled-back insert above it would otherwise let the id come back).
    const id = this.idFloor === null ? null : Math.max(this.idFloor, this.maxId()) + 1;
    const { lastInsertRowid } = this.sql(
      `INSERT INTO messages (id, folder_id, uid, message_id, in_reply_to, subject, from_json, to_json, cc_json,
         date, preview, size, attachments_json, encrypted, seen, received_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    ).run(
      id, message.folderId, message.uid, message.messageId, message.inReplyTo, message.subject,
      message.from ? JSON.stringify(message.from) : null, JSON.stringify(message.to), JSON.stringify(message.cc),
      message.date, message.preview, message.size, JSON.stringify(message.attachments),
      message.encrypted ? 1 : 0, message.seen ? 1 : 0, message.receivedAt,
    );
    const rowId = Number(lastInsertRowid);
    this.sql('INSERT INTO message_raw (message_rowid, raw) VALUES (?, ?)').run(rowId, message.raw);
    this.searchIndex.queue(rowId, message.folderId, message.searchText);
    if (message.body) this.bodies.insert(rowId, message.body);
    else this.bodies.queueBackfill(rowId);
    return rowId;
  }

  /** Newest first. UIDs are paged through the (folder_id, uid) index before any row is read. */
  page(folderId: number, limit: number, offset: number): MessageSummary[] {
    const rows = this.sql(
      `SELECT ${SUMMARY_COLUMNS} FROM messages m
       WHERE m.id IN (SELECT id FROM messages WHERE folder_id = ? ORDER BY uid DESC LIMIT ? OFFSET ?)
       ORDER BY m.uid DESC`,
    ).all(folderId, limit, offset) as SummaryRow[];
    return rows.map(toSummary);
  }

  /**
   * `match` is an FTS5 query built by the caller; the index itself keeps it to the folder.
   * Within a folder, row ids grow with UIDs (both are taken when a message is stored, and
   * messages never move), so the index's rowid order is the folder's UID order.
   */
  search(folderId: number, match: string, limit: number, offset: number): MessagePage {
    const scoped = inFolder(folderId, match);
    const total = this.index.count(scoped);
    if (total <= offset) return { total, items: [] };
    const ids = this.index.newestFirst(scoped, limit, offset);
    const rows = this.sql(
      `SELECT ${SUMMARY_COLUMNS} FROM messages m WHERE m.id IN (SELECT value FROM json_each(?)) ORDER BY m.uid DESC`,
    ).all(JSON.stringify(ids)) as SummaryRow[];
    return { total, items: rows.map(toSummary) };
  }

  /** The list columns of one message and its In-Reply-To, without its raw bytes. */
  summaryByUid(folderId: number, uid: number): (MessageSummary & { inReplyTo: string | null }) | null {
    const row = this.sql(`SELECT ${SUMMARY_COLUMNS}, m.in_reply_to FROM messages m WHERE m.folder_id = ? AND m.uid = ?`).get(folderId, uid) as
      | (SummaryRow & { in_reply_to: string | null })
      | undefined;
    return row ? { ...toSummary(row), inReplyTo: row.in_reply_to } : null;
  }

  /** The raw bytes of every stored message together (what the database holds beyond its own structures). */
  totalRawBytes(): number {
    return (this.sql('SELECT coalesce(sum(length(raw)), 0) AS n FROM message_raw').get() as { n: number }).n;
  }

  /**
   * Removes a message for good (IMAP's expunge, RFC 3501 section 2.3.1.1: its UID is never
   * used again): the row, its raw bytes and stored body (ON DELETE CASCADE), one off the folder's count, and
   * its full-text entry (SearchIndexRepo.forget). Returns its row id, or null when absent.
   */
  remove(folderId: number, uid: number): number | null {
    const rowId = this.sql('SELECT id FROM messages WHERE folder_id = ? AND uid = ?').pluck().get(folderId, uid) as number | undefined;
    if (rowId === undefined) return null;
    this.sql('DELETE FROM messages WHERE id = ?').run(rowId);
    this.sql('UPDATE folders SET message_count = message_count - 1 WHERE id = ?').run(folderId);
    this.sql('UPDATE message_id_floor SET floor = max(floor, ?)').run(rowId);
    this.idFloor = Math.max(this.idFloor ?? 0, rowId);
    this.searchIndex.forget(rowId);
    return rowId;
  }

  private maxId(): number {
    return (this.sql('SELECT max(id) FROM messages').pluck().get() as number | null) ?? 0;
  }

  setSeen(rowId: number, seen: boolean): void {
    this.sql('UPDATE messages SET seen = ? WHERE id = ?').run(seen ? 1 : 0, rowId);
  }
}
