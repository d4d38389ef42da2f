import { addressesOf, type AddressColumns } from './address-columns.js';
import type { AddressEntry, AttachmentMeta, MessageSummary, StoredMessage } from '../core/types.js';
import { Repo } from './repo.js';

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
  /** Text for the full-text index. */
  searchText: { subject: string; participants: string; body: string };
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

const MATCHING_IDS = 'SELECT rowid FROM messages_fts WHERE messages_fts MATCH ?';

/**
 * Up to this many full-text hits (in all folders) a search looks each hit up; beyond it,
 * walking the folder's own index is cheaper. Exported for the test that covers both plans.
 */
export const FEW_HITS = 2000;

export class MessageRepo extends Repo {
  insert(message: NewMessage): number {
    const { lastInsertRowid } = this.sql(
      `INSERT INTO messages (folder_id, uid, message_id, in_reply_to, subject, from_json, to_json, cc_json,
         date, preview, size, attachments_json, encrypted, seen, received_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    ).run(
      message.folderId, message.uid, message.messageId, message.inReplyTo, message.subject,
      message.from ? JSON.stringify(message.from) : null, JSON.stringify(message.to), JSON.stringify(message.cc),
      message.date, message.preview, message.size, JSON.stringify(message.attachments),
      message.encrypted ? 1 : 0, message.seen ? 1 : 0, message.receivedAt,
    );
    const rowId = Number(lastInsertRowid);
    this.sql('INSERT INTO message_raw (message_rowid, raw) VALUES (?, ?)').run(rowId, message.raw);
    const { subject, participants, body } = message.searchText;
    this.sql('INSERT INTO messages_fts (rowid, subject, participants, body) VALUES (?, ?, ?, ?)').run(
      rowId, subject, participants, body,
    );
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
   * `match` is an FTS5 query built by the caller from quoted terms. Two plans, because the
   * full-text index spans every folder: when the index matches few messages overall, walk
   * its hits and look each row up; when it matches many, walk the folder's UID index and
   * test each UID against the hit set (the cost then follows the folder, not the hits).
   */
  search(folderId: number, match: string, limit: number, offset: number): MessagePage {
    const hits = this.fewHits(folderId, match);
    if (hits === null) return this.searchByFolderWalk(folderId, match, limit, offset);
    hits.sort((a, b) => b[1] - a[1]);
    const ids = hits.slice(offset, offset + limit).map(([id]) => id);
    const rows = ids.length === 0 ? [] : this.sql(
      `SELECT ${SUMMARY_COLUMNS} FROM messages m WHERE m.id IN (SELECT value FROM json_each(?)) ORDER BY m.uid DESC`,
    ).all(JSON.stringify(ids)) as SummaryRow[];
    return { total: hits.length, items: rows.map(toSummary) };
  }

  /** [row id, uid] of this folder's hits, or null once the index yields more than FEW_HITS rows. */
  private fewHits(folderId: number, match: string): [number, number][] | null {
    const statement = this.sql(
      `SELECT m.id, m.uid, m.folder_id FROM messages_fts f JOIN messages m ON m.id = f.rowid WHERE f.messages_fts MATCH ?`,
    ).raw();
    const hits: [number, number][] = [];
    let seen = 0;
    for (const [id, uid, folder] of statement.iterate(match) as IterableIterator<[number, number, number]>) {
      // Leaving the loop early resets the statement.
      if ((seen += 1) > FEW_HITS) return null;
      if (folder === folderId) hits.push([id, uid]);
    }
    return hits;
  }

  private searchByFolderWalk(folderId: number, match: string, limit: number, offset: number): MessagePage {
    const total = this.sql(
      `SELECT count(*) AS n FROM messages m WHERE m.folder_id = ? AND m.id IN (${MATCHING_IDS})`,
    ).get(folderId, match) as { n: number };
    const rows = this.sql(
      `SELECT ${SUMMARY_COLUMNS} FROM messages m
       WHERE m.folder_id = ? AND m.id IN (${MATCHING_IDS})
       ORDER BY m.uid DESC LIMIT ? OFFSET ?`,
    ).all(folderId, match, limit, offset) as SummaryRow[];
    return { total: total.n, items: rows.map(toSummary) };
  }

  byUid(folderId: number, uid: number): StoredMessage | null {
    const row = this.sql(
      `SELECT ${SUMMARY_COLUMNS}, r.raw FROM messages m JOIN message_raw r ON r.message_rowid = m.id
       WHERE m.folder_id = ? AND m.uid = ?`,
    ).get(folderId, uid) as (SummaryRow & { raw: Buffer }) | undefined;
    return row ? { ...toSummary(row), raw: row.raw } : null;
  }

  /** Size only, so an oversized message is refused before its bytes are read. */
  sizeByUid(folderId: number, uid: number): number | null {
    const row = this.sql('SELECT size FROM messages WHERE folder_id = ? AND uid = ?').get(folderId, uid) as
      | { size: number }
      | undefined;
    return row ? row.size : null;
  }

  setSeen(rowId: number, seen: boolean): void {
    this.sql('UPDATE messages SET seen = ? WHERE id = ?').run(seen ? 1 : 0, rowId);
  }
}
