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

const HEX = (byte: number): number => {
  if (byte >= 0x30 && byte <= 0x39) return byte - 0x30;
  if (byte >= 0x41 && byte <= 0x46) return byte - 0x37;
  if (byte >= 0x61 && byte <= 0x66) return byte - 0x57;
  return -1;
};

/** RFC 2045 section 6.7: =XX is a byte, "=" at a line end is a soft break; anything else is kept. */
export const decodeQuotedPrintable = (body: Buffer): Buffer => {
  const out = Buffer.allocUnsafe(body.length);
  let length = 0;
  for (let index = 0; index < body.length; index += 1) {
    const byte = body[index];
    if (byte !== 0x3d) {
      out[length++] = byte;
      continue;
    }
    const high = HEX(body[index + 1] ?? 0);
    const low = HEX(body[index + 2] ?? 0);
    if (high !== -1 && low !== -1) {
      out[length++] = high * 16 + low;
      index += 2;
      continue;
    }
    const softBreak = softBreakLength(body, index + 1);
    if (softBreak !== -1) index += softBreak;
    else out[length++] = byte;
  }
  return out.subarray(0, length);
};

/** Bytes after "=" that end the line (trailing blanks, then CRLF or LF), or -1. */
const softBreakLength = (body: Buffer, from: number): number => {
  let index = from;
  while (body[index] === 0x20 || body[index] === 0x09) index += 1;
  if (body[index] === 0x0d && body[index + 1] === 0x0a) return index + 2 - from;
  if (body[index] === 0x0a) return index + 1 - from;
  return index >= body.length ? index - from : -1;
};
