/**
 * Whether a message's stored text is its raw body as it is: one text/plain part sent as
 * 7bit, 8bit or binary in UTF-8 (or ASCII), which is most mail agents write. For such a
 * message, SEARCH TEXT and BODY (RFC 3501 section 6.4.4) can look in the raw bytes the row
 * already holds instead of inflating the packed text (src/core/packed-text.ts): for a search
 * string of ASCII characters other than CR and LF, the raw bytes hold it (ASCII case
 * ignored) exactly when the decoded text does. UTF-8 decoding turns ASCII bytes into the same
 * characters and never uses them in a replacement character, and every other byte into
 * characters outside ASCII, which a case-insensitive ASCII pattern never matches; the only
 * other difference, CRLF against LF, is outside any such string.
 */

/**
 * Where the raw body starts when the stored text is exactly that body decoded as UTF-8 with
 * CRLF as LF and there is no HTML; else null. The header must end with CRLF CRLF there, so
 * no search string without CR and LF spans the header and the body.
 */
export const plainTextStart = (raw: Buffer, bodyStart: number, text: string, html: string | null): number | null => {
  if (html !== null || bodyStart < 4 || raw.readUInt32BE(bodyStart - 4) !== CRLF_CRLF) return null;
  // Cheap refusals first: the text cannot be longer than the body's bytes, nor shorter than a
  // third of them (UTF-8 spends at most 3 bytes on one UTF-16 unit, CRLF 2 on its LF, and an
  // invalid sequence at most 3 on its U+FFFD), so an attachment's bytes are not decoded for
  // nothing (a 24 MB one made two strings of 24 MB).
  const bodyBytes = raw.length - bodyStart;
  if (text.length > bodyBytes || text.length * 3 < bodyBytes) return null;
  return plainBodyIs(raw, bodyStart, text) ? bodyStart : null;
};

/** Bytes of the body decoded at a time when compared with a text (a 24 MB body made two strings of 24 MB at once). */
const PIECE_BYTES = 1024 * 1024;

/**
 * Whether plainBodyText(raw, bodyStart) is `text`, decoded a piece at a time. Each piece ends
 * just after a LF, which UTF-8 decoding never joins to the bytes before it (an incomplete
 * sequence there decodes to U+FFFD either way), and which keeps every CRLF within one piece:
 * the pieces' texts joined are the whole's.
 */
const plainBodyIs = (raw: Buffer, bodyStart: number, text: string): boolean => {
  let at = 0;
  for (let from = bodyStart; from < raw.length; ) {
    const lf = raw.indexOf(0x0a, Math.min(raw.length, from + PIECE_BYTES) - 1);
    const to = lf === -1 ? raw.length : lf + 1;
    const piece = raw.toString('utf8', from, to).replaceAll('\r\n', '\n');
    if (text.slice(at, at + piece.length) !== piece) return false;
    at += piece.length;
    from = to;
  }
  return at === text.length;
};

/** The text of a plain message from its raw bytes: what the stored text is when plainTextStart is not null. */
export const plainBodyText = (raw: Buffer, bodyStart: number): string => raw.toString('utf8', bodyStart).replaceAll('\r\n', '\n');

const CRLF_CRLF = 0x0d0a0d0a;

/** Search strings the raw bytes of a plain message answer for exactly (see above): ASCII, no CR or LF. */
export const searchableInRaw = (needle: string): boolean => /^[^\r\n\u0080-\uffff]*$/.test(needle);
