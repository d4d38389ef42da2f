import type { AddressEntry } from '../../core/types.js';
import { parseHeaderFields } from '../../mime/mime-tree.js';
import { addressesOf } from '../../store/address-columns.js';
import type { DatedRow, SearchFieldsRow } from '../../store/imap-rows.js';
import type { SearchKey } from './search-key.js';

// Whether one message matches a SEARCH key (RFC 3501 section 6.4.4), from what search.ts read
// of it: strings as case-insensitive substrings, subject and addresses as ingest decoded them.

/** Dates compare by UTC day (matchesDate, and the narrowing in search.ts). */
export const DAY_MS = 86_400_000;

/** One message as a search sees it: its row, and what the keys need read of it. */
export interface Candidate {
  row: DatedRow;
  /** Subject and addresses, read only when a key looks at them. */
  fields?: SearchFieldsRow;
  /** The addresses, parsed from their columns at first need. */
  addresses?: ReturnType<typeof addressesOf>;
  recent: boolean;
  /** The header (latin1) and the decoded body text, read only when a key needs them. */
  header?: string;
  body?: string;
  /**
   * A plain message's bytes as latin1, when every text key's string can be looked for in
   * them (src/mime/plain-body.ts); `body` is then its body's bytes as latin1.
   */
  whole?: string;
}

export const isAscii = (text: string): boolean => /^[\x20-\x7e]*$/.test(text);

/**
 * Whether a FROM string can be cut in SQL on the stored JSON: a substring of `name <email>`
 * that holds none of the characters between and around the parts, nor any that JSON escapes,
 * lies inside the name or the email, and so inside the JSON as it is.
 */
export const fromCut = (text: string): boolean => isAscii(text) && !/[<>,"\\]/.test(text) && text.trim() === text && text.length > 0;

export const matches = (candidate: Candidate, key: SearchKey): boolean => {
  const { row } = candidate;
  switch (key.kind) {
    case 'all':
      return true;
    case 'none':
      return false;
    case 'and':
      return key.keys.every((inner) => matches(candidate, inner));
    case 'or':
      return matches(candidate, key.left) || matches(candidate, key.right);
    case 'not':
      return !matches(candidate, key.key);
    case 'uids':
      return key.uids.has(row.uid);
    case 'flag':
      return row.flags[key.flag] === key.set;
    case 'recent':
      return key.which === 'old' ? !candidate.recent : candidate.recent && (key.which === 'recent' || !row.flags.seen);
    case 'keyword':
      return row.flags.keywords.includes(key.keyword) === key.set;
    case 'header':
      return matchesHeader(candidate, key.field, needleOf(key.text));
    case 'text':
      return matchesText(candidate, key.scope, needleOf(key.text));
    case 'date':
      return matchesDate(key.of === 'internal' ? row.receivedAt : row.date, key.op, key.day);
    case 'size':
      return key.op === 'larger' ? row.size > key.bytes : row.size < key.bytes;
    case 'modseq':
      return row.modseq >= key.modseq;
  }
};

const addressText = (entries: readonly (AddressEntry | null)[]): string =>
  entries
    .filter((entry): entry is AddressEntry => entry !== null)
    .map((entry) => `${entry.name ?? ''} <${entry.email}>`)
    .join(', ');

/** A search string as a pattern, and whether it can be looked for in the address columns' JSON first (see addressesMatch). */
interface Needle {
  pattern: RegExp;
  inJson: boolean;
}

const NEEDLES = new Map<string, Needle>();

/**
 * A search string as a case-insensitive literal pattern (RFC 3501 section 6.4.4: substrings,
 * case-insensitive), compiled once per string: tested against the stored texts as they are,
 * no lowercased copy of each message is made.
 */
const needleOf = (text: string): Needle => {
  let needle = NEEDLES.get(text);
  if (!needle) {
    if (NEEDLES.size >= 100) NEEDLES.clear();
    needle = { pattern: new RegExp(text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'), 'i'), inJson: fromCut(text) };
    NEEDLES.set(text, needle);
  }
  return needle;
};

type AddressField = 'from' | 'to' | 'cc';
const JSON_COLUMNS = { from: 'from_json', to: 'to_json', cc: 'cc_json' } as const;

/**
 * Whether the addresses of these fields, as `name <email>, ...`, hold the string. A string
 * that fromCut accepts lies inside one name or email there, so inside the JSON columns as
 * they are: when none of them holds it, nothing is parsed (most messages, for most strings).
 */
const addressesMatch = (candidate: Candidate, fields: readonly AddressField[], needle: Needle): boolean => {
  const columns = (candidate.fields as SearchFieldsRow).addresses;
  if (needle.inJson && !fields.some((field) => needle.pattern.test(columns[JSON_COLUMNS[field]] ?? ''))) return false;
  const addresses = (candidate.addresses ??= addressesOf(columns));
  if (fields.length === 1 && fields[0] === 'from') return addresses.from !== null && needle.pattern.test(addressText([addresses.from]));
  return needle.pattern.test(addressText(fields.flatMap((field) => (field === 'from' ? [addresses.from] : addresses[field]))));
};

/** Subject, From, To and Cc as ingest stored them decoded; any other field as it is in the header. */
const matchesHeader = (candidate: Candidate, field: string, needle: Needle): boolean => {
  if (field === 'subject') return needle.pattern.test((candidate.fields as SearchFieldsRow).subject);
  if (field === 'from' || field === 'to' || field === 'cc') return addressesMatch(candidate, [field], needle);
  return parseHeaderFields(Buffer.from(candidate.header ?? '', 'latin1')).some(
    (candidateField) => candidateField.name === field && needle.pattern.test(candidateField.value),
  );
};

/** TEXT looks in the header and the body, BODY in the body only. */
const matchesText = (candidate: Candidate, scope: 'text' | 'body', needle: Needle): boolean => {
  // The header ends in CRLF CRLF, which no string here holds: one test covers both parts.
  if (scope === 'text' && candidate.whole !== undefined) return needle.pattern.test(candidate.whole) || matchesFields(candidate, needle);
  if (needle.pattern.test(candidate.body ?? '')) return true;
  if (scope === 'body') return false;
  return needle.pattern.test(candidate.header ?? '') || matchesFields(candidate, needle);
};

/** The subject and addresses as ingest decoded them (an encoded word, RFC 2047, is not in the header's bytes). */
const matchesFields = (candidate: Candidate, needle: Needle): boolean =>
  needle.pattern.test((candidate.fields as SearchFieldsRow).subject) || addressesMatch(candidate, ['from', 'to', 'cc'], needle);

/** RFC 3501: dates compare by day, disregarding time and time zone; we use UTC days. */
const matchesDate = (at: number | null, op: 'before' | 'on' | 'since', day: number): boolean => {
  if (at === null) return false;
  const dayOf = Math.floor(at / DAY_MS) * DAY_MS;
  if (op === 'before') return dayOf < day;
  if (op === 'on') return dayOf === day;
  return dayOf >= day;
};
