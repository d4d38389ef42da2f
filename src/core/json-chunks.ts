/**
 * JSON text of a value in pieces of about `sliceChars`, the same value JSON.parse reads back as
 * from JSON.stringify: a string longer than a slice is written slice by slice (each slice
 * escaped on its own; a slice never ends between the two halves of a surrogate pair). Lets an
 * adapter send a large document without one long synchronous stringify: a message read with a
 * 2 MB html holds the event loop for tens of milliseconds in one JSON.stringify.
 */
export function* jsonChunks(value: unknown, sliceChars = 65_536): Generator<string> {
  if (typeof value === 'string' && value.length > sliceChars) {
    yield* longString(value, sliceChars);
  } else if (Array.isArray(value)) {
    yield '[';
    for (let i = 0; i < value.length; i += 1) {
      if (i > 0) yield ',';
      // As JSON.stringify: undefined and functions in an array are null.
      yield* jsonChunks(value[i] === undefined || typeof value[i] === 'function' ? null : value[i], sliceChars);
    }
    yield ']';
  } else if (isPlainObject(value)) {
    yield '{';
    let first = true;
    for (const [key, field] of Object.entries(value)) {
      // As JSON.stringify: undefined and functions as object members are left out.
      if (field === undefined || typeof field === 'function') continue;
      yield `${first ? '' : ','}${JSON.stringify(key)}:`;
      first = false;
      yield* jsonChunks(field, sliceChars);
    }
    yield '}';
  } else {
    yield JSON.stringify(value) ?? 'null';
  }
}

/** How many characters of strings `value` holds, keys included: what its JSON's size follows. */
export const textLength = (value: unknown): number => {
  if (typeof value === 'string') return value.length;
  if (Array.isArray(value)) return value.reduce((sum: number, item) => sum + textLength(item), 0);
  if (isPlainObject(value)) return Object.entries(value).reduce((sum: number, [key, field]) => sum + key.length + textLength(field), 0);
  return 0;
};

function* longString(value: string, sliceChars: number): Generator<string> {
  yield '"';
  for (let start = 0; start < value.length; ) {
    let end = Math.min(value.length, start + sliceChars);
    // The first half of a pair last would be escaped alone (\ud83d) and its second half in the next slice too:
    // valid JSON for the same string, but not JSON.stringify's text. The slice takes the pair whole.
    if (end < value.length && isHighSurrogate(value.charCodeAt(end - 1)) && isLowSurrogate(value.charCodeAt(end))) end += 1;
    yield JSON.stringify(value.slice(start, end)).slice(1, -1);
    start = end;
  }
  yield '"';
}

const isHighSurrogate = (code: number): boolean => code >= 0xd800 && code <= 0xdbff;
const isLowSurrogate = (code: number): boolean => code >= 0xdc00 && code <= 0xdfff;

/** Objects JSON.stringify writes member by member (no toJSON, such as a Date's). */
const isPlainObject = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && typeof (value as { toJSON?: unknown }).toJSON !== 'function';
