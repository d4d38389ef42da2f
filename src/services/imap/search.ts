import type { AddressEntry } from '../../core/types.js';
import type { MessageMeta } from '../../store/imap.js';
import { toFtsQuery } from '../mail/mailbox.js';
import { parseHeaderFields } from '../../mime/mime-tree.js';

/** RFC 3501 section 6.4.4 search keys, with sequence sets already resolved to UIDs. */
export type SearchKey =
  | { kind: 'all' }
  | { kind: 'none' }
  | { kind: 'and'; keys: SearchKey[] }
  | { kind: 'or'; left: SearchKey; right: SearchKey }
  | { kind: 'not'; key: SearchKey }
  | { kind: 'uids'; uids: ReadonlySet<number> }
  | { kind: 'flag'; flag: 'seen' | 'flagged'; set: boolean }
  /** `field` lowercased; an empty `text` matches every message that has the field. */
  | { kind: 'header'; field: string; text: string }
  /** TEXT (header and body) or BODY, through the full-text index. */
  | { kind: 'text'; scope: 'text' | 'body'; text: string }
  /** `day` is midnight UTC of the date given, in Unix milliseconds. */
  | { kind: 'date'; of: 'internal' | 'sent'; op: 'before' | 'on' | 'since'; day: number }
  | { kind: 'size'; op: 'larger' | 'smaller'; bytes: number };

export interface SearchContext {
  /** UIDs whose indexed text matches an FTS5 query. */
  fullText(match: string): ReadonlySet<number>;
  raw(uid: number): Buffer;
}

const DAY_MS = 86_400_000;
const HEADER_PEEK_BYTES = 64 * 1024;

export const matchesSearch = (row: MessageMeta, key: SearchKey, context: SearchContext): boolean => {
  switch (key.kind) {
    case 'all': return true;
    case 'none': return false;
    case 'and': return key.keys.every((inner) => matchesSearch(row, inner, context));
    case 'or': return matchesSearch(row, key.left, context) || matchesSearch(row, key.right, context);
    case 'not': return !matchesSearch(row, key.key, context);
    case 'uids': return key.uids.has(row.uid);
    case 'flag': return (key.flag === 'seen' ? row.seen : row.flagged) === key.set;
    case 'header': return matchesHeader(row, key.field, key.text, context);
    case 'text': return matchesText(row, key.scope, key.text, context);
    case 'date': return matchesDate(key.of === 'internal' ? row.receivedAt : row.date, key.op, key.day);
    case 'size': return key.op === 'larger' ? row.size > key.bytes : row.size < key.bytes;
  }
};

/** Substring, case-insensitive (RFC 3501 section 6.4.4), over the decoded stored fields. */
const contains = (haystack: string, needle: string): boolean => haystack.toLowerCase().includes(needle.toLowerCase());

const addressText = (entries: readonly (AddressEntry | null)[]): string =>
  entries.filter((entry): entry is AddressEntry => entry !== null).map((entry) => `${entry.name ?? ''} <${entry.email}>`).join(', ');

const matchesHeader = (row: MessageMeta, field: string, text: string, context: SearchContext): boolean => {
  switch (field) {
    case 'subject': return contains(row.subject, text);
    case 'from': return row.from !== null && contains(addressText([row.from]), text);
    case 'to': return contains(addressText(row.to), text);
    case 'cc': return contains(addressText(row.cc), text);
    default: {
      // Any other field: read the raw header (never more than its first 64 KB).
      const head = context.raw(row.uid).subarray(0, HEADER_PEEK_BYTES);
      return parseHeaderFields(head).some((candidate) => candidate.name === field && contains(candidate.value, text));
    }
  }
};

const matchesText = (row: MessageMeta, scope: 'text' | 'body', text: string, context: SearchContext): boolean => {
  if (scope === 'text' && (contains(row.subject, text) || contains(addressText([row.from, ...row.to, ...row.cc]), text))) return true;
  const match = toFtsQuery(text, { columns: scope === 'body' ? 'body' : 'text', prefixAlways: true });
  if (match === null) return text.trim() === '';
  return context.fullText(match).has(row.uid);
};

/** RFC 3501: dates compare by day, disregarding time and time zone; we use UTC days. */
const matchesDate = (at: number | null, op: 'before' | 'on' | 'since', day: number): boolean => {
  if (at === null) return false;
  const dayOf = Math.floor(at / DAY_MS) * DAY_MS;
  if (op === 'before') return dayOf < day;
  if (op === 'on') return dayOf === day;
  return dayOf >= day;
};
