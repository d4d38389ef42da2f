/**
 * IMAP response values (RFC 3501 section 4) and their wire form. A string goes out quoted
 * when it is short 7-bit text, otherwise as a literal, so any bytes are safe to send.
 */
export type ImapValue =
  | number
  | null
  | { atom: string }
  | { str: string }
  | { bytes: Buffer }
  /** Values written back to back with no space (multipart bodies in BODYSTRUCTURE). */
  | { adjacent: ImapValue[] }
  | ImapValue[];

export type Chunk = string | Buffer;

export const atom = (value: string): ImapValue => ({ atom: value });
export const str = (value: string): ImapValue => ({ str: value });
/** NIL for a missing string (nstring). */
export const nstr = (value: string | null | undefined): ImapValue => (value === null || value === undefined ? null : { str: value });
export const bytes = (value: Buffer): ImapValue => ({ bytes: value });

const QUOTABLE = /^[\x20-\x7e]{0,1000}$/;

export const serialize = (value: ImapValue, out: Chunk[] = []): Chunk[] => {
  if (value === null) out.push('NIL');
  else if (typeof value === 'number') out.push(String(value));
  else if (Array.isArray(value)) {
    out.push('(');
    value.forEach((item, index) => {
      if (index > 0) out.push(' ');
      serialize(item, out);
    });
    out.push(')');
  } else if ('atom' in value) out.push(value.atom);
  else if ('adjacent' in value) for (const item of value.adjacent) serialize(item, out);
  else if ('str' in value) {
    if (QUOTABLE.test(value.str)) out.push(`"${value.str.replace(/[\\"]/g, '\\$&')}"`);
    else literal(Buffer.from(value.str, 'utf8'), out);
  } else literal(value.bytes, out);
  return out;
};

const literal = (data: Buffer, out: Chunk[]): void => {
  out.push(`{${data.length}}\r\n`);
  out.push(data);
};

/** Items separated by spaces, e.g. the inside of a FETCH response. */
export const serializeAll = (values: readonly ImapValue[]): Chunk[] => {
  const out: Chunk[] = [];
  values.forEach((value, index) => {
    if (index > 0) out.push(' ');
    serialize(value, out);
  });
  return out;
};

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
const pad = (value: number, width = 2): string => String(value).padStart(width, '0');

/** RFC 3501 date-time: "dd-Mon-yyyy hh:mm:ss +0000", in UTC. */
export const imapDateTime = (at: number): string => {
  const date = new Date(at);
  return `${pad(date.getUTCDate())}-${MONTHS[date.getUTCMonth()]}-${date.getUTCFullYear()} ` +
    `${pad(date.getUTCHours())}:${pad(date.getUTCMinutes())}:${pad(date.getUTCSeconds())} +0000`;
};

/** RFC 3501 date: "d-Mon-yyyy"; returns midnight UTC in Unix milliseconds, or null. */
export const parseImapDate = (text: string): number | null => {
  const match = /^(\d{1,2})-([A-Za-z]{3})-(\d{4})$/.exec(text);
  if (!match) return null;
  const month = MONTHS.findIndex((name) => name.toLowerCase() === match[2].toLowerCase());
  if (month === -1) return null;
  const day = Number(match[1]);
  const at = Date.UTC(Number(match[3]), month, day);
  return new Date(at).getUTCDate() === day ? at : null;
};
