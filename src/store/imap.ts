import type { Db } from './db.js';
import { addressesOf, type AddressColumns } from './address-columns.js';
import type { AddressEntry } from '../core/types.js';
import { Repo } from './repo.js';
import { inFolder, type SearchIndexReader } from './search-db.js';

/** What IMAP needs of one message besides its bytes: flags, sizes, dates, searchable fields. */
export interface MessageMeta {
  rowId: number;
  uid: number;
  size: number;
  seen: boolean;
  flagged: boolean;
  /** When we stored it: the IMAP INTERNALDATE (RFC 3501 section 2.3.3). */
  receivedAt: number;
  /** The Date header, when it parsed. */
  date: number | null;
  subject: string;
  from: AddressEntry | null;
  to: AddressEntry[];
  cc: AddressEntry[];
}

interface MetaRow extends AddressColumns {
  id: number;
  uid: number;
  size: number;
  seen: number;
  flagged: number;
  received_at: number;
  date: number | null;
  subject: string;
}

const META_COLUMNS = 'id, uid, size, seen, flagged, received_at, date, subject, from_json, to_json, cc_json';

const toMeta = (row: MetaRow): MessageMeta => ({
  rowId: row.id,
  uid: row.uid,
  size: row.size,
  seen: row.seen === 1,
  flagged: row.flagged === 1,
  receivedAt: row.received_at,
  date: row.date,
  subject: row.subject,
  ...addressesOf(row),
});

/** Queries over messages that the IMAP session service needs, all by (folder_id, uid). */
export class ImapRepo extends Repo {
  constructor(db: Db, private readonly index: SearchIndexReader) {
    super(db);
  }

  /** Every UID of a folder in ascending order: the message sequence numbers (RFC 3501 2.3.1.2). */
  uidsAfter(folderId: number, afterUid: number): number[] {
    return this.sql('SELECT uid FROM messages WHERE folder_id = ? AND uid > ? ORDER BY uid').pluck().all(folderId, afterUid) as number[];
  }

  /** Rows with UIDs in [low, high], ascending; callers filter to the exact set they asked for. */
  metaBetween(folderId: number, low: number, high: number): MessageMeta[] {
    const rows = this.sql(`SELECT ${META_COLUMNS} FROM messages WHERE folder_id = ? AND uid BETWEEN ? AND ? ORDER BY uid`)
      .all(folderId, low, high) as MetaRow[];
    return rows.map(toMeta);
  }

  raw(folderId: number, uid: number): Buffer | null {
    const row = this.sql(
      `SELECT r.raw FROM messages m JOIN message_raw r ON r.message_rowid = m.id WHERE m.folder_id = ? AND m.uid = ?`,
    ).pluck().get(folderId, uid) as Buffer | undefined;
    return row ?? null;
  }

  /** The first `maxBytes` of the raw message: enough for its header without reading a large body. */
  rawHead(folderId: number, uid: number, maxBytes: number): Buffer | null {
    const row = this.sql(
      `SELECT substr(r.raw, 1, ?) FROM messages m JOIN message_raw r ON r.message_rowid = m.id WHERE m.folder_id = ? AND m.uid = ?`,
    ).pluck().get(maxBytes, folderId, uid) as Buffer | undefined;
    return row ?? null;
  }

  /** The same seen/flagged columns REST reads as isRead/isStarred. */
  setFlags(rowId: number, seen: boolean, flagged: boolean): void {
    this.sql('UPDATE messages SET seen = ?, flagged = ? WHERE id = ?').run(seen ? 1 : 0, flagged ? 1 : 0, rowId);
  }

  unseenCount(folderId: number): number {
    return this.sql('SELECT count(*) FROM messages WHERE folder_id = ? AND seen = 0').pluck().get(folderId) as number;
  }

  firstUnseenUid(folderId: number): number | null {
    return (this.sql('SELECT min(uid) FROM messages WHERE folder_id = ? AND seen = 0').pluck().get(folderId) as number | null) ?? null;
  }

  /** UIDs whose indexed subject, participants or body match an FTS5 query built by the caller. */
  fullTextUids(folderId: number, match: string): number[] {
    const ids = this.index.all(inFolder(folderId, match));
    return this.sql('SELECT uid FROM messages WHERE id IN (SELECT value FROM json_each(?)) ORDER BY uid')
      .pluck().all(JSON.stringify(ids)) as number[];
  }
}
