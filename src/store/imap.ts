import { addressesOf } from './address-columns.js';
import type { MessageFlags } from '../core/types.js';
import {
  FETCH_COLUMNS,
  FLAG_COLUMNS,
  type DatedRow,
  type FetchRow,
  type FetchRowColumns,
  type FlagColumns,
  type FlagRow,
  type MessageMeta,
  META_COLUMNS,
  type MetaColumns,
  type SearchFieldsRow,
  type SearchTextRow,
  fetchRowOf,
  toFlagRow,
} from './imap-rows.js';
import { keywordsColumn } from './messages.js';
import type { Db } from './db.js';
import type { MessageRawRepo } from './message-raw.js';
import type { MessageBodyRepo } from './message-bodies.js';
import { Repo } from './repo.js';

/**
 * What SQL can decide of a SEARCH before any row is read into JavaScript: ranges and flags
 * (RFC 3501 section 6.4.4), and substrings of the subject and the From address. Every bound
 * is inclusive below, exclusive above; null leaves that part open.
 */
export interface SearchNarrowing {
  receivedFrom: number | null;
  receivedBefore: number | null;
  /** Any bound on the Date header: messages without one never match. */
  sentFrom: number | null;
  sentBefore: number | null;
  /** Sizes strictly above `larger` and strictly below `smaller`. */
  larger: number | null;
  smaller: number | null;
  modseqAtLeast: number | null;
  flags: Partial<Record<'seen' | 'answered' | 'flagged' | 'deleted' | 'draft', boolean>>;
  /** ASCII substrings, matched case-insensitively (SQLite LIKE folds ASCII only). */
  subjectContains: string | null;
  fromContains: string | null;
}

/** A LIKE pattern for a literal substring, `\` as the escape. */
const containsPattern = (text: string | null): string | null => (text === null ? null : `%${text.replace(/[\\%_]/g, '\\$&')}%`);

const flagParameter = (value: boolean | undefined): number | null => (value === undefined ? null : value ? 1 : 0);

/** Queries over messages that the IMAP session service needs, all by (folder_id, uid). */
/** What searchTexts reads of a message written in pieces (large-values.ts). */
interface StagedColumns {
  rawValueId: number | null;
  valuesJson: string | null;
}

const HEADER_END = Buffer.from('\r\n\r\n', 'latin1');

/** The top-level header as searchTexts cuts it in SQL: up to the first blank line, or the first `headerMax` bytes. */
const headerOf = (head: Buffer, headerMax: number): Buffer => {
  const end = head.subarray(0, headerMax).indexOf(HEADER_END);
  return end < 0 ? head.subarray(0, headerMax) : head.subarray(0, end + HEADER_END.length);
};

export class ImapRepo extends Repo {
  constructor(
    db: Db,
    private readonly raws: MessageRawRepo,
    private readonly bodies: MessageBodyRepo,
  ) {
    super(db);
  }

  /** Every UID of a folder above `afterUid`, ascending: the message sequence numbers (RFC 3501 2.3.1.2). */
  uidsAfter(folderId: number, afterUid: number): number[] {
    return this.sql('SELECT uid FROM messages WHERE folder_id = ? AND uid > ? ORDER BY uid').pluck().all(folderId, afterUid) as number[];
  }

  /** Rows with UIDs in [low, high], ascending; callers filter to the exact set they asked for. */
  metaBetween(folderId: number, low: number, high: number): MessageMeta[] {
    return this.searchFieldsBetween(folderId, low, high).map(({ addresses, ...row }) => ({ ...row, ...addressesOf(addresses) }));
  }

  /** Rows with UIDs in [low, high], ascending, their addresses unparsed. */
  searchFieldsBetween(folderId: number, low: number, high: number): SearchFieldsRow[] {
    const rows = this.sql(`SELECT ${META_COLUMNS} FROM messages m WHERE m.folder_id = ? AND m.uid BETWEEN ? AND ? ORDER BY m.uid`).all(
      folderId,
      low,
      high,
    ) as MetaColumns[];
    return rows.map((row) => ({
      ...toFlagRow(row),
      size: row.size,
      receivedAt: row.received_at,
      date: row.date,
      subject: row.subject,
      addresses: { from_json: row.from_json, to_json: row.to_json, cc_json: row.cc_json },
    }));
  }

  /** Flags, sizes and dates of UIDs in [low, high], ascending: what a SEARCH without text keys reads (no subject, no addresses). */
  datesBetween(folderId: number, low: number, high: number): DatedRow[] {
    const rows = this.sql(
      `SELECT ${FLAG_COLUMNS}, m.size, m.received_at, m.date FROM messages m WHERE m.folder_id = ? AND m.uid BETWEEN ? AND ? ORDER BY m.uid`,
    ).all(folderId, low, high) as (FlagColumns & { size: number; received_at: number; date: number | null })[];
    return rows.map((row) => ({ ...toFlagRow(row), size: row.size, receivedAt: row.received_at, date: row.date }));
  }

  /**
   * FETCH rows with UIDs in [low, high], ascending, in one read. `wire` joins the stored ENVELOPE
   * and BODYSTRUCTURE of builder `version`; `rawMaxBytes` brings the raw bytes of the messages of
   * at most that size (a FETCH of BODY[] for many), null none. An initial sync maps tens of
   * thousands of these: rows come as arrays (no property names set per row), and ENVELOPE and
   * BODYSTRUCTURE as one blob cut in two without a copy, one Buffer per row instead of two,
   * which more than halves the time (docs/contributing/benchmarks.md).
   */
  fetchBetween(folderId: number, low: number, high: number, wire: boolean, version: number, rawMaxBytes: number | null = null): FetchRow[] {
    // A message written in pieces (large-values.ts) is far over any size asked for here: its raw comes null, read on its own.
    const raw = 'CASE WHEN m.size <= ? THEN (SELECT r.raw FROM message_raw r WHERE r.message_rowid = m.id AND r.raw_value_id IS NULL) END';
    const range = 'WHERE m.folder_id = ? AND m.uid BETWEEN ? AND ? ORDER BY m.uid';
    // Without raw bytes the CASE never holds (sizes are not negative), so no blob is read.
    const rawMax = rawMaxBytes ?? -1;
    const rows = (
      wire
        ? this.sql(
            `SELECT ${FETCH_COLUMNS}, ${raw}, CAST(w.envelope || w.body_structure AS BLOB), length(w.envelope)
             FROM messages m LEFT JOIN message_wire w ON w.message_rowid = m.id AND w.version = ? ${range}`,
          )
            .raw(true)
            .all(rawMax, version, folderId, low, high)
        : this.sql(`SELECT ${FETCH_COLUMNS}, ${raw}, NULL, NULL FROM messages m ${range}`).raw(true).all(rawMax, folderId, low, high)
    ) as FetchRowColumns[];
    return rows.map(fetchRowOf);
  }

  /** Flags of messages up to `maxUid` changed after `modseq` (RFC 7162), ascending by UID. */
  flagsChangedSince(folderId: number, modseq: number, maxUid: number): FlagRow[] {
    const rows = this.sql(`SELECT ${FLAG_COLUMNS} FROM messages m WHERE m.folder_id = ? AND m.modseq > ? AND m.uid <= ? ORDER BY m.uid`).all(
      folderId,
      modseq,
      maxUid,
    ) as FlagColumns[];
    return rows.map(toFlagRow);
  }

  /** UIDs expunged after `modseq`, ascending (QRESYNC's VANISHED, RFC 7162 section 3.2.10). */
  expungedSince(folderId: number, modseq: number): number[] {
    return this.sql('SELECT uid FROM expunged WHERE folder_id = ? AND modseq > ? ORDER BY uid').pluck().all(folderId, modseq) as number[];
  }

  /** Each row's new flags, all under one mod-sequence (a STORE over many messages is one call). */
  setFlagsOfMany(changes: readonly { rowId: number; flags: MessageFlags }[], modseq: number): void {
    for (const { rowId, flags } of changes) this.setFlags(rowId, flags, modseq);
  }

  setFlags(rowId: number, flags: MessageFlags, modseq: number): void {
    this.sql('UPDATE messages SET seen = ?, flagged = ?, answered = ?, deleted = ?, draft = ?, keywords = ?, modseq = ? WHERE id = ?').run(
      flags.seen ? 1 : 0,
      flags.flagged ? 1 : 0,
      flags.answered ? 1 : 0,
      flags.deleted ? 1 : 0,
      flags.draft ? 1 : 0,
      keywordsColumn(flags.keywords),
      modseq,
      rowId,
    );
  }

  /** UIDs marked \Deleted, ascending: what EXPUNGE removes (RFC 3501 section 6.4.3). */
  deletedUids(folderId: number): number[] {
    return this.sql('SELECT uid FROM messages WHERE folder_id = ? AND deleted = 1 ORDER BY uid').pluck().all(folderId) as number[];
  }

  raw(folderId: number, uid: number): Buffer | null {
    const rowId = this.rowIdOf(folderId, uid);
    return rowId === null ? null : this.raws.bytes(rowId);
  }

  /** The first `maxBytes` of the raw message: enough for its header without reading a large body. */
  rawHead(folderId: number, uid: number, maxBytes: number): Buffer | null {
    const rowId = this.rowIdOf(folderId, uid);
    return rowId === null ? null : this.raws.range(rowId, 0, maxBytes);
  }

  private rowIdOf(folderId: number, uid: number): number | null {
    return (this.sql('SELECT id FROM messages WHERE folder_id = ? AND uid = ?').pluck().get(folderId, uid) as number | undefined) ?? null;
  }

  /**
   * Stored texts and top-level headers of UIDs in [low, high]. The header is the bytes up to
   * the first blank line (CRLF CRLF), or the first `headerMax` bytes when there is none. A
   * plain message comes whole instead, its packed texts unread.
   */
  searchTexts(folderId: number, low: number, high: number, version: number, headerMax: number): SearchTextRow[] {
    const rows = this.sql(
      `SELECT m.id AS rowId, m.uid, b.plain_text_start AS plainTextStart, r.raw_value_id AS rawValueId, b.values_json AS valuesJson,
         CASE WHEN b.plain_text_start IS NULL THEN b.text END AS text, CASE WHEN b.plain_text_start IS NULL THEN b.html END AS html,
         CASE WHEN b.plain_text_start IS NOT NULL THEN r.raw
           ELSE substr(r.raw, 1, CASE WHEN instr(substr(r.raw, 1, ?), X'0D0A0D0A') > 0 THEN instr(substr(r.raw, 1, ?), X'0D0A0D0A') + 3 ELSE ? END) END AS bytes
       FROM messages m JOIN message_raw r ON r.message_rowid = m.id
       LEFT JOIN message_bodies b ON b.message_rowid = m.id AND b.version = ?
       WHERE m.folder_id = ? AND m.uid BETWEEN ? AND ? ORDER BY m.uid`,
    ).all(headerMax, headerMax, headerMax, version, folderId, low, high) as (SearchTextRow & StagedColumns)[];
    return rows.map((row) => this.unstaged(row, headerMax));
  }

  /** A row of searchTexts with what was written in pieces (large-values.ts) read back: the same row as for any other message. */
  private unstaged({ rawValueId, valuesJson, ...row }: SearchTextRow & StagedColumns, headerMax: number): SearchTextRow {
    if (rawValueId === null && valuesJson === null) return row;
    const texts = this.bodies.withValues({ text: row.text ?? '', html: row.html, extractedText: null, extractedHtml: null }, valuesJson);
    const staged = { ...row, text: row.text === null ? null : texts.text, html: texts.html };
    if (rawValueId === null) return staged;
    const raw = row.plainTextStart === null ? this.raws.range(row.rowId, 0, headerMax) : (this.raws.bytes(row.rowId) ?? Buffer.alloc(0));
    return { ...staged, bytes: row.plainTextStart === null ? headerOf(raw, headerMax) : raw };
  }

  /**
   * UIDs of a folder that pass a narrowing, ascending. One statement for every shape (an
   * unused part is a NULL parameter), so searches never prepare new statements.
   */
  uidsNarrowed(folderId: number, narrowing: SearchNarrowing): number[] {
    const { flags } = narrowing;
    const sent = narrowing.sentFrom !== null || narrowing.sentBefore !== null;
    return this.sql(
      `SELECT uid FROM messages WHERE folder_id = ?
         AND (? IS NULL OR received_at >= ?) AND (? IS NULL OR received_at < ?)
         AND (? = 0 OR (date IS NOT NULL AND (? IS NULL OR date >= ?) AND (? IS NULL OR date < ?)))
         AND (? IS NULL OR size > ?) AND (? IS NULL OR size < ?) AND (? IS NULL OR modseq >= ?)
         AND (? IS NULL OR seen = ?) AND (? IS NULL OR answered = ?) AND (? IS NULL OR flagged = ?)
         AND (? IS NULL OR deleted = ?) AND (? IS NULL OR draft = ?)
         AND (? IS NULL OR subject LIKE ? ESCAPE '\\') AND (? IS NULL OR from_json LIKE ? ESCAPE '\\')
       ORDER BY uid`,
    )
      .pluck()
      .all(
        folderId,
        ...twice(narrowing.receivedFrom),
        ...twice(narrowing.receivedBefore),
        sent ? 1 : 0,
        ...twice(narrowing.sentFrom),
        ...twice(narrowing.sentBefore),
        ...twice(narrowing.larger),
        ...twice(narrowing.smaller),
        ...twice(narrowing.modseqAtLeast),
        ...twice(flagParameter(flags.seen)),
        ...twice(flagParameter(flags.answered)),
        ...twice(flagParameter(flags.flagged)),
        ...twice(flagParameter(flags.deleted)),
        ...twice(flagParameter(flags.draft)),
        ...twice(containsPattern(narrowing.subjectContains)),
        ...twice(containsPattern(narrowing.fromContains)),
      ) as number[];
  }

  unseenCount(folderId: number): number {
    return this.sql('SELECT count(*) FROM messages WHERE folder_id = ? AND seen = 0').pluck().get(folderId) as number;
  }

  firstUnseenUid(folderId: number): number | null {
    return (this.sql('SELECT min(uid) FROM messages WHERE folder_id = ? AND seen = 0').pluck().get(folderId) as number | null) ?? null;
  }
}

const twice = <T>(value: T): [T, T] => [value, value];
