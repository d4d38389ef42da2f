import type { AddressColumns } from './address-columns.js';
import type { AddressEntry, MessageFlags } from '../core/types.js';
import type { PackedText } from '../core/stored-message.js';
import { keywordsOf } from './messages.js';

// The rows the IMAP queries (imap.ts) give, and how their columns become them.

/** A message's flags and mod-sequence: what a FETCH FLAGS and a resynchronization need. */
export interface FlagRow {
  rowId: number;
  uid: number;
  flags: MessageFlags;
  modseq: number;
}

/** Flags, size and dates: what SEARCH reads when no key looks at text. */
export interface DatedRow extends FlagRow {
  size: number;
  /** When we stored it: the IMAP INTERNALDATE (RFC 3501 section 2.3.3). */
  receivedAt: number;
  /** The Date header, when it parsed. */
  date: number | null;
}

/** What IMAP needs of one message besides its bytes: flags, sizes, dates, searchable fields. */
export interface MessageMeta extends DatedRow {
  subject: string;
  from: AddressEntry | null;
  to: AddressEntry[];
  cc: AddressEntry[];
}

/**
 * What SEARCH reads of a message when a key looks at its subject or addresses: the address
 * columns as stored (JSON), which a search parses only when its string may be in them.
 */
export interface SearchFieldsRow extends DatedRow {
  subject: string;
  addresses: AddressColumns;
}

/** One row of a FETCH: no address columns to decode, the stored ENVELOPE and BODYSTRUCTURE when asked for. */
export interface FetchRow extends FlagRow {
  size: number;
  receivedAt: number;
  /** Null when the message has no stored body of the current version yet. */
  envelopeWire: Buffer | null;
  structureWire: Buffer | null;
  /** The raw message, when the FETCH asked for it whole and it is small (read with the rows, not one by one). */
  raw?: Buffer;
}

/** The texts SEARCH TEXT and BODY look in (RFC 3501 section 6.4.4: substrings). */
export interface SearchTextRow {
  rowId: number;
  uid: number;
  /**
   * Where the body starts in `bytes` when the message is plain (src/mime/plain-body.ts):
   * `bytes` is then the whole message, its text that body, and `text` and `html` are null.
   */
  plainTextStart: number | null;
  /** The stored text (src/core/packed-text.ts form), null without a stored body or when plain. */
  text: PackedText | null;
  html: PackedText | null;
  /** The top-level header's bytes (for TEXT), or the whole message when it is plain. */
  bytes: Buffer;
}

export interface FlagColumns {
  id: number;
  uid: number;
  seen: number;
  flagged: number;
  answered: number;
  deleted: number;
  draft: number;
  keywords: string | null;
  modseq: number;
}

export const FLAG_COLUMNS = 'm.id, m.uid, m.seen, m.flagged, m.answered, m.deleted, m.draft, m.keywords, m.modseq';
export const META_COLUMNS = `${FLAG_COLUMNS}, m.size, m.received_at, m.date, m.subject, m.from_json, m.to_json, m.cc_json`;

const flagsOf = (row: FlagColumns): MessageFlags => flagsFrom(row.seen, row.answered, row.flagged, row.deleted, row.draft, row.keywords);

const flagsFrom = (seen: number, answered: number, flagged: number, deleted: number, draft: number, keywords: string | null): MessageFlags => ({
  seen: seen === 1,
  answered: answered === 1,
  flagged: flagged === 1,
  deleted: deleted === 1,
  draft: draft === 1,
  keywords: keywordsOf(keywords),
});

export const toFlagRow = (row: FlagColumns): FlagRow => ({ rowId: row.id, uid: row.uid, flags: flagsOf(row), modseq: row.modseq });

/** FLAG_COLUMNS as an array row. */
type FlagRowColumns = [
  id: number,
  uid: number,
  seen: number,
  flagged: number,
  answered: number,
  deleted: number,
  draft: number,
  keywords: string | null,
  modseq: number,
];

/** The columns of fetchBetween's array rows, FLAG_COLUMNS first in their order. */
export const FETCH_COLUMNS = `${FLAG_COLUMNS}, m.size, m.received_at`;

/** A fetchBetween row: FETCH_COLUMNS, the raw bytes, the ENVELOPE and BODYSTRUCTURE blob and where it is cut (nulls when absent). */
export type FetchRowColumns = [...FlagRowColumns, size: number, receivedAt: number, raw: Buffer | null, wire: Buffer | null, envelopeLength: number | null];

/** One literal per row, no intermediate: a sync maps tens of thousands. */
export const fetchRowOf = ([
  id,
  uid,
  seen,
  flagged,
  answered,
  deleted,
  draft,
  keywords,
  modseq,
  size,
  receivedAt,
  raw,
  wire,
  envelopeLength,
]: FetchRowColumns): FetchRow => ({
  rowId: id,
  uid,
  flags: flagsFrom(seen, answered, flagged, deleted, draft, keywords),
  modseq,
  size,
  receivedAt,
  envelopeWire: wire ? wire.subarray(0, envelopeLength ?? 0) : null,
  structureWire: wire ? wire.subarray(envelopeLength ?? 0) : null,
  ...(raw !== null && { raw }),
});

export type MetaColumns = FlagColumns & AddressColumns & { size: number; received_at: number; date: number | null; subject: string };
