import { ParseError } from './parser.js';

/** RFC 3501 section 9 sequence-set: "1,3:5,7:*". `*` is kept as STAR until resolved. */
const STAR = -1;
type Range = [number, number];

export const parseSequenceSet = (text: string): Range[] => {
  if (!/^[0-9*:,]+$/.test(text)) throw new ParseError(`invalid sequence set "${text}"`);
  return text.split(',').map((item) => {
    const bounds = item.split(':');
    if (bounds.length > 2) throw new ParseError(`invalid sequence set "${text}"`);
    const [low, high] = bounds.map(parseBound);
    return [low, high ?? low];
  });
};

const parseBound = (text: string): number => {
  if (text === '*') return STAR;
  if (!/^[1-9][0-9]{0,9}$/.test(text) || Number(text) > 0xffffffff) throw new ParseError(`invalid number "${text}" in a sequence set`);
  return Number(text);
};

export const isSequenceSet = (text: string): boolean => /^[0-9*:,]+$/.test(text) && /[0-9*]/.test(text[0]);

/**
 * UIDs named by a set, ascending and existing in this selection. With `byUid`, numbers
 * are UIDs and `*` is the highest UID (a range beyond it still includes it: RFC 3501
 * section 6.4.8); otherwise they are sequence numbers and `*` is the last message.
 */
export const resolveSet = (ranges: readonly Range[], uids: readonly number[], byUid: boolean): number[] => {
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
      for (let seq = low; seq <= Math.min(high, uids.length); seq += 1) picked.add(uids[seq - 1]);
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
