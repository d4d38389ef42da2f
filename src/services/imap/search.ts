import type { Folder } from '../../core/types.js';
import { STORED_BODY_VERSION } from '../../core/stored-message.js';
import { unpackText } from '../../core/packed-text.js';
import { plainBodyText, searchableInRaw } from '../../mime/plain-body.js';
import type { SearchNarrowing } from '../../store/imap.js';
import type { SearchTextRow } from '../../store/imap-rows.js';
import type { Store } from '../../store/index.js';
import type { MessageBodyService } from '../mail/bodies.js';
import { rowsOf } from '../mail/message-ops.js';
import { MESSAGE_STEPS, pacedSteps } from '../../core/paced-steps.js';
import { type Candidate, DAY_MS, fromCut, isAscii, matches } from './search-match.js';
import type { SearchKey } from './search-key.js';

/** A header longer than this is searched in its first this many bytes. */
const HEADER_MAX_BYTES = 64 * 1024;
/**
 * SEARCH over a folder (RFC 3501 section 6.4.4): flags, dates and sizes from the rows; the
 * strings of TEXT, BODY and HEADER as case-insensitive substrings, as the RFC defines them,
 * of the decoded text and header that ingest stored. In steps, so a folder of many thousands
 * of messages never holds the event loop for long.
 */
export const searchFolder = async (
  store: Store,
  bodies: MessageBodyService,
  folder: Folder,
  uids: readonly number[],
  key: SearchKey,
  recent: ReadonlySet<number>,
): Promise<number[]> => {
  const { narrowing, exact, cut } = narrowingOf(key);
  const passing = exact || cut ? new Set(await store.imap.uidsNarrowed(folder.id, narrowing)) : null;
  const sorted = (passing ? uids.filter((uid) => passing.has(uid)) : [...uids]).sort((a, b) => a - b);
  if (exact) return sorted;
  const needs = textsNeeded(key);
  const fields = needs || fieldsNeeded(key);
  const inRaw = needs && textStringsOf(key).every(searchableInRaw);
  const found: number[] = [];
  await pacedSteps(sorted, MESSAGE_STEPS, async (chunk) => {
    const candidates: Candidate[] = fields
      ? (await rowsOf(chunk, (low, high) => store.imap.searchFieldsBetween(folder.id, low, high))).map((row) => ({
          row,
          fields: row,
          recent: recent.has(row.uid),
        }))
      : (await rowsOf(chunk, (low, high) => store.imap.datesBetween(folder.id, low, high))).map((row) => ({ row, recent: recent.has(row.uid) }));
    if (needs) await addTexts(store, bodies, folder, chunk, candidates, inRaw);
    for (const candidate of candidates) if (matches(candidate, key)) found.push(candidate.row.uid);
  });
  return found;
};

const OPEN: SearchNarrowing = {
  receivedFrom: null,
  receivedBefore: null,
  sentFrom: null,
  sentBefore: null,
  larger: null,
  smaller: null,
  modseqAtLeast: null,
  flags: {},
  subjectContains: null,
  fromContains: null,
};

/**
 * What SQL can decide first: the key's top-level conjuncts that are ranges, flags or plain
 * substrings of the subject or From. The rest (OR, keywords, RECENT, text) is left to the rows.
 * `exact`: the narrowing is the whole answer, no row needs reading. A substring is only a
 * first cut (the rows decide), and only ASCII is cut in SQL, whose LIKE folds ASCII case alone.
 */
const narrowingOf = (key: SearchKey): { narrowing: SearchNarrowing; exact: boolean; cut: boolean } => {
  const narrowing: SearchNarrowing = { ...OPEN, flags: {} };
  let exact = true;
  const max = (a: number | null, b: number) => (a === null ? b : Math.max(a, b));
  const min = (a: number | null, b: number) => (a === null ? b : Math.min(a, b));
  for (const conjunct of key.kind === 'and' ? key.keys : [key]) {
    const flag =
      conjunct.kind === 'flag' ? conjunct : conjunct.kind === 'not' && conjunct.key.kind === 'flag' ? { ...conjunct.key, set: !conjunct.key.set } : null;
    if (flag) {
      // SEEN UNSEEN: nothing can match; the range below says so.
      if (narrowing.flags[flag.flag] === !flag.set) narrowing.smaller = 0;
      narrowing.flags[flag.flag] = flag.set;
    } else if (conjunct.kind === 'all') {
      // No condition.
    } else if (conjunct.kind === 'none') {
      narrowing.smaller = 0;
    } else if (conjunct.kind === 'date') {
      // `day` is a midnight: the day of t is on or after it exactly when t is (matchesDate).
      const [from, before] =
        conjunct.op === 'since' ? [conjunct.day, null] : conjunct.op === 'before' ? [null, conjunct.day] : [conjunct.day, conjunct.day + DAY_MS];
      const which = conjunct.of === 'internal' ? (['receivedFrom', 'receivedBefore'] as const) : (['sentFrom', 'sentBefore'] as const);
      if (from !== null) narrowing[which[0]] = max(narrowing[which[0]], from);
      if (before !== null) narrowing[which[1]] = min(narrowing[which[1]], before);
    } else if (conjunct.kind === 'size') {
      if (conjunct.op === 'larger') narrowing.larger = max(narrowing.larger, conjunct.bytes);
      else narrowing.smaller = min(narrowing.smaller, conjunct.bytes);
    } else if (conjunct.kind === 'modseq') {
      narrowing.modseqAtLeast = max(narrowing.modseqAtLeast, conjunct.modseq);
    } else {
      exact = false;
      if (conjunct.kind === 'header' && conjunct.field === 'subject' && isAscii(conjunct.text) && conjunct.text.length > 0) {
        narrowing.subjectContains ??= conjunct.text;
      } else if (conjunct.kind === 'header' && conjunct.field === 'from' && fromCut(conjunct.text)) {
        narrowing.fromContains ??= conjunct.text;
      }
    }
  }
  const cut = Object.values(narrowing).some((value) => value !== null && typeof value !== 'object') || Object.keys(narrowing.flags).length > 0;
  return { narrowing, exact, cut };
};

/** Header fields ingest stored decoded: searched there, without reading the header. */
const DECODED_FIELDS = new Set(['subject', 'from', 'to', 'cc']);

const textsNeeded = (key: SearchKey): boolean => {
  switch (key.kind) {
    case 'text':
      return true;
    case 'header':
      return !DECODED_FIELDS.has(key.field);
    case 'and':
      return key.keys.some(textsNeeded);
    case 'or':
      return textsNeeded(key.left) || textsNeeded(key.right);
    case 'not':
      return textsNeeded(key.key);
    default:
      return false;
  }
};

/** Whether a key looks at the subject or the addresses (text keys do too, through textsNeeded). */
const fieldsNeeded = (key: SearchKey): boolean => {
  switch (key.kind) {
    case 'header':
      return true;
    case 'and':
      return key.keys.some(fieldsNeeded);
    case 'or':
      return fieldsNeeded(key.left) || fieldsNeeded(key.right);
    case 'not':
      return fieldsNeeded(key.key);
    default:
      return false;
  }
};

/** The strings of the TEXT and BODY keys in a key. */
const textStringsOf = (key: SearchKey): string[] => {
  switch (key.kind) {
    case 'text':
      return [key.text];
    case 'and':
      return key.keys.flatMap(textStringsOf);
    case 'or':
      return [...textStringsOf(key.left), ...textStringsOf(key.right)];
    case 'not':
      return textStringsOf(key.key);
    default:
      return [];
  }
};

/** `inRaw`: every TEXT and BODY string can be looked for in a plain message's bytes. */
const addTexts = async (
  store: Store,
  bodies: MessageBodyService,
  folder: Folder,
  chunk: readonly number[],
  candidates: Candidate[],
  inRaw: boolean,
): Promise<void> => {
  const texts = new Map<number, SearchTextRow>();
  for (const row of await rowsOf(chunk, (low, high) => store.imap.searchTexts(folder.id, low, high, STORED_BODY_VERSION, HEADER_MAX_BYTES)))
    texts.set(row.uid, row);
  for (const candidate of candidates) {
    const text = texts.get(candidate.row.uid);
    if (text && text.plainTextStart !== null) {
      addPlain(candidate, text.bytes, text.plainTextStart, inRaw);
      continue;
    }
    candidate.header = (text?.bytes ?? Buffer.alloc(0)).toString('latin1');
    if (text && text.text !== null) {
      candidate.body = `${unpackText(text.text)}\n${text.html === null ? '' : unpackText(text.html)}`;
    } else {
      // Stored before its body was built: built now, on a parse worker.
      const content = await bodies.content(candidate.row.rowId);
      candidate.body = `${content.text}\n${content.html ?? ''}`;
    }
  }
};

/** A plain message's header and text from its bytes, with no packed text inflated. */
const addPlain = (candidate: Candidate, bytes: Buffer, bodyStart: number, inRaw: boolean): void => {
  if (inRaw) {
    candidate.whole = bytes.toString('latin1');
    candidate.header = candidate.whole.slice(0, bodyStart);
    candidate.body = candidate.whole.slice(bodyStart);
  } else {
    candidate.header = bytes.toString('latin1', 0, bodyStart);
    candidate.body = `${plainBodyText(bytes, bodyStart)}\n`;
  }
};
