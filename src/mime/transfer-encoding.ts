/**
 * Content-Transfer-Encoding decoding (RFC 2045 section 6) of one part's body bytes, in
 * linear time: a read decodes only the attachment it returns. Malformed input is decoded
 * leniently, as mail readers do (RFC 2045 section 6.7 note 1, section 6.8).
 */
export const decodeBody = (body: Buffer, encoding: string): Buffer => {
  switch (encoding.toLowerCase()) {
    // Characters outside the base64 alphabet are ignored (RFC 2045 section 6.8).
    case 'base64':
      return Buffer.from(body.toString('latin1'), 'base64');
    case 'quoted-printable':
      return decodeQuotedPrintable(body);
    // 7bit, 8bit, binary and unknown encodings pass through (RFC 2045 section 6.4).
    default:
      return body;
  }
};

/**
 * The length `decodeBody` gives, without making the decoded bytes: an attachment's size is
 * listed at ingest, and decoding a 24 MB attachment to measure it held 42 MB at once (its
 * text and its bytes).
 */
export const decodedLength = (body: Buffer, encoding: string): number => {
  switch (encoding.toLowerCase()) {
    case 'base64':
      return base64Length(body);
    case 'quoted-printable':
      return scanQuotedPrintable(body, null);
    default:
      return body.length;
  }
};

/** 1 for the bytes of the base64 alphabets (RFC 4648 sections 4 and 5: Node's decoder takes both). */
const BASE64_ALPHABET = new Uint8Array(256);
for (const char of 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/-_') BASE64_ALPHABET[char.charCodeAt(0)] = 1;
const PAD = 0x3d;

/**
 * What the decoder makes of `body`: every 4 characters of the alphabet are 3 bytes, a last 2 or
 * 3 are 1 or 2 bytes; anything else is skipped, and the first "=" ends the data (RFC 2045
 * section 6.8). `test/transfer-encoding.test.ts` holds this to Node's own decoder.
 */
const base64Length = (body: Buffer): number => {
  const end = body.indexOf(PAD);
  const stop = end === -1 ? body.length : end;
  let count = 0;
  for (let index = 0; index < stop; index += 1) count += BASE64_ALPHABET[body[index]];
  return Math.floor((count * 3) / 4);
};

const HEX = (byte: number): number => {
  if (byte >= 0x30 && byte <= 0x39) return byte - 0x30;
  if (byte >= 0x41 && byte <= 0x46) return byte - 0x37;
  if (byte >= 0x61 && byte <= 0x66) return byte - 0x57;
  return -1;
};

/** RFC 2045 section 6.7: =XX is a byte, "=" at a line end is a soft break; anything else is kept. */
export const decodeQuotedPrintable = (body: Buffer): Buffer => {
  const out = Buffer.allocUnsafe(body.length);
  return out.subarray(0, scanQuotedPrintable(body, out));
};

/** Decodes into `out` (at least as long as `body`), or only counts with null; the decoded length. */
const scanQuotedPrintable = (body: Buffer, out: Buffer | null): number => {
  let length = 0;
  for (let index = 0; index < body.length; index += 1) {
    const byte = body[index];
    if (byte !== 0x3d) {
      if (out) out[length] = byte;
      length += 1;
      continue;
    }
    const high = HEX(body[index + 1] ?? 0);
    const low = HEX(body[index + 2] ?? 0);
    if (high !== -1 && low !== -1) {
      if (out) out[length] = high * 16 + low;
      length += 1;
      index += 2;
      continue;
    }
    const softBreak = softBreakLength(body, index + 1);
    if (softBreak !== -1) index += softBreak;
    else {
      if (out) out[length] = byte;
      length += 1;
    }
  }
  return length;
};

/** Bytes after "=" that end the line (trailing blanks, then CRLF or LF), or -1. */
const softBreakLength = (body: Buffer, from: number): number => {
  let index = from;
  while (body[index] === 0x20 || body[index] === 0x09) index += 1;
  if (body[index] === 0x0d && body[index + 1] === 0x0a) return index + 2 - from;
  if (body[index] === 0x0a) return index + 1 - from;
  return index >= body.length ? index - from : -1;
};
