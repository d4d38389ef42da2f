import { ParseError } from './parser.js';

/** RFC 3501 section 9 sequence-set: "1,3:5,7:*". `*` is kept as STAR until resolved. */
const STAR = -1;
type Range = [number, number];

export const parseSequenceSet = (text: string): Range[] => {
  if (!/^[0-9*:,]+$/.test(text)) throw new ParseError(`invalid sequence set "${text.slice(0, 40)}"`);
  return text.split(',').map((item) => {
    const bounds = item.split(':');
    if (bounds.length > 2) throw new ParseError(`invalid sequence set "${text.slice(0, 40)}"`);
    const [low, high] = bounds.map(parseBound);
    return [low, high ?? low];
  });
};

const parseBound = (text: string): number => {
  if (text === '*') return STAR;
  if (!/^[1-9][0-9]{0,9}$/.test(text) || Number(text) > 0xffffffff) throw new ParseError(`invalid number "${text.slice(0, 12)}" in a sequence set`);
  return Number(text);
};

export const isSequenceSet = (text: string): boolean => /^[0-9*:,]+$/.test(text) && /[0-9*]/.test(text[0]);

/**
 * UIDs named by a set, ascending and existing in this selection. With `byUid`, numbers
 * are UIDs and `*` is the highest UID (a range beyond it still includes it: RFC 3501
 * section 6.4.8). Otherwise they are sequence numbers and `*` is the last message; a number
 * past the last message is an error (RFC 3501 section 9, seq-number: "a number greater than
 * the number of messages" is invalid), so the command answers BAD, as Dovecot does.
 */
export const resolveSet = (ranges: readonly Range[], uids: readonly number[], byUid: boolean): number[] => {
  if (!byUid) {
    for (const [low, high] of ranges) {
      if (low > uids.length || high > uids.length || ((low === STAR || high === STAR) && uids.length === 0)) {
        throw new ParseError(`invalid message sequence number: the folder has ${uids.length} messages`);
      }
    }
  }
  if (uids.length === 0) return [];
  const picked = new Set<number>();
  for (const [rawLow, rawHigh] of ranges) {
    const star = byUid ? uids[uids.length - 1] : uids.length;
    const a = rawLow === STAR ? star : rawLow;
    const b = rawHigh === STAR ? star : rawHigh;
    const [low, high] = a <= b ? [a, b] : [b, a];
    if (byUid) {
      for (let index = lowerBound(uids, low); index < uids.length && uids[index] <= high; index += 1) picked.add(uids[index]);
    } else {
      for (let seq = low; seq <= high; seq += 1) picked.add(uids[seq - 1]);
    }
  }
  return [...picked].sort((x, y) => x - y);
};

/** Index of the first element >= value in an ascending array. */
export const lowerBound = (sorted: readonly number[], value: number): number => {
  let low = 0;
  let high = sorted.length;
  while (low < high) {
    const middle = (low + high) >>> 1;
    if (sorted[middle] < value) low = middle + 1;
    else high = middle;
  }
  return low;
};

/** The sequence number of a UID in this selection, or 0 when it is not in it. */
export const sequenceOf = (uids: readonly number[], uid: number): number => {
  const index = lowerBound(uids, uid);
  return uids[index] === uid ? index + 1 : 0;
};

/** A UID set in the compact form RFC 4315 and RFC 7162 responses use ("1:3,7"), from ascending UIDs. */
export const uidSetText = (sorted: readonly number[]): string => {
  const parts: string[] = [];
  let start = -1;
  let previous = -1;
  for (const uid of sorted) {
    if (start !== -1 && uid === previous + 1) {
      previous = uid;
      continue;
    }
    if (start !== -1) parts.push(start === previous ? String(start) : `${start}:${previous}`);
    start = uid;
    previous = uid;
  }
  if (start !== -1) parts.push(start === previous ? String(start) : `${start}:${previous}`);
  return parts.join(',');
};

/** Whether a UID is in a set that uses no `*` (QRESYNC's known UIDs, RFC 7162 section 3.2.5). */
export const uidSetMatcher = (text: string): ((uid: number) => boolean) => {
  const ranges = parseSequenceSet(text).map(([low, high]) => {
    if (low === STAR || high === STAR) throw new ParseError('a known-UID set cannot use *');
    return [Math.min(low, high), Math.max(low, high)] as const;
  });
  return (uid) => ranges.some(([low, high]) => uid >= low && uid <= high);
};
