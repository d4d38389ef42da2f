import { encapsulatedMessage, headerBlocks, parseMimeTree, type MimePart } from './mime-tree.js';

/**
 * What a message asks of the SMTP server that takes it:
 * - `eightBit`: octets over 127 in a body: BODY=8BITMIME (RFC 6152), or a 7-bit transfer
 *   encoding when the server does not offer it;
 * - `utf8Headers`: octets over 127 in a header field, the message's or a MIME part's
 *   (RFC 6532 section 3): SMTPUTF8 (RFC 6531 section 3.4); there is no 7-bit form of it that
 *   keeps the message as it is.
 */
export interface TransportNeeds {
  eightBit: boolean;
  utf8Headers: boolean;
}

const hasHighOctet = (raw: Buffer, start: number, end: number): boolean => {
  for (let index = start; index < end; index += 1) if (raw[index] > 0x7f) return true;
  return false;
};

/** The body bytes that belong to this part itself: all of a leaf's, a container's gaps between its parts. */
const ownBodySpans = (part: MimePart): [number, number][] => {
  if (part.children.length === 0) return [[part.bodyStart, part.end]];
  const spans: [number, number][] = [];
  let cursor = part.bodyStart;
  for (const child of part.children) {
    spans.push([cursor, child.start]);
    cursor = child.end;
  }
  spans.push([cursor, part.end]);
  return spans;
};

export const transportNeedsOf = (raw: Buffer): TransportNeeds => {
  const needs: TransportNeeds = { eightBit: false, utf8Headers: false };
  if (!hasHighOctet(raw, 0, raw.length)) return needs;
  const visit = (part: MimePart): void => {
    if (hasHighOctet(raw, part.start, part.bodyStart)) needs.utf8Headers = true;
    if (ownBodySpans(part).some(([start, end]) => hasHighOctet(raw, start, end))) needs.eightBit = true;
    part.children.forEach(visit);
  };
  visit(parseMimeTree(raw));
  return needs;
};

/** A body this module cannot turn into 7-bit without changing what it says. */
export class NotConvertible extends Error {}

/**
 * RFC 6152 section 3 and RFC 2045 section 6: the same message with every 8-bit body
 * re-encoded, text as quoted-printable and anything else as base64, and its
 * Content-Transfer-Encoding changed to match; multipart and message/rfc822 containers are
 * rebuilt around their converted parts and marked 7bit. Parts without 8-bit octets keep
 * their bytes. The header fields must already be 7-bit (utf8Headers false).
 */
export const toSevenBit = (raw: Buffer): Buffer => Buffer.concat(convertPart(raw, parseMimeTree(raw)));

const convertPart = (raw: Buffer, part: MimePart): Buffer[] => {
  if (!hasHighOctet(raw, part.bodyStart, part.end)) return [raw.subarray(part.start, part.end)];
  const header = raw.subarray(part.start, part.bodyStart);
  const inner = encapsulatedMessage(part);
  if (inner) return [withEncoding(header, '7bit'), ...convertPart(raw, inner)];
  if (part.contentType.type === 'multipart') {
    if (part.children.length === 0) throw new NotConvertible('a multipart body without parts (or past the parse limits)');
    const spans = ownBodySpans(part);
    const out = [withEncoding(header, '7bit'), sevenBitText(raw, spans[0])];
    part.children.forEach((child, index) => out.push(...convertPart(raw, child), sevenBitText(raw, spans[index + 1])));
    return out;
  }
  const encoding = transferEncodingOf(header);
  if (encoding === 'quoted-printable' || encoding === 'base64') throw new NotConvertible(`8-bit octets inside a ${encoding} body`);
  const body = raw.subarray(part.bodyStart, part.end);
  if (part.contentType.type === 'text') return [withEncoding(header, 'quoted-printable'), quotedPrintable(body)];
  return [withEncoding(header, 'base64'), base64Lines(body)];
};

/** Preamble, delimiter lines and epilogue: kept, unless 8-bit (text nobody reads, RFC 2046 5.1.1). */
const sevenBitText = (raw: Buffer, [start, end]: [number, number]): Buffer => {
  const text = raw.subarray(start, end);
  return hasHighOctet(raw, start, end) ? Buffer.from(text.toString('latin1').replace(/[\x80-\xff]/g, '?'), 'latin1') : text;
};

const transferEncodingOf = (header: Buffer): string =>
  (
    headerBlocks(header)
      .find((block) => block.name === 'content-transfer-encoding')
      ?.bytes.toString('latin1') ?? ''
  )
    .replace(/^[^:]*:/, '')
    .trim()
    .toLowerCase();

/** The header with its Content-Transfer-Encoding replaced (or added), ending in the blank line. */
const withEncoding = (header: Buffer, encoding: string): Buffer => {
  const kept = headerBlocks(header)
    .filter((block) => block.name !== 'content-transfer-encoding')
    .map((block) => block.bytes);
  return Buffer.concat([...kept, Buffer.from(`Content-Transfer-Encoding: ${encoding}\r\n\r\n`, 'latin1')]);
};

const MAX_LINE = 76;

/**
 * RFC 2045 section 6.7: line breaks stay hard breaks (CRLF); "=", controls and octets over
 * 127 become =XX; a space or tab before a line end is encoded; lines are softly broken with
 * "=" so none is longer than 76 characters.
 */
export const quotedPrintable = (body: Buffer): Buffer => {
  const lines = body.toString('latin1').split(/\r?\n/);
  return Buffer.from(lines.map(encodeLine).join('\r\n'), 'latin1');
};

const encodeLine = (line: string): string => {
  const out: string[] = [];
  let current = '';
  for (let index = 0; index < line.length; index += 1) {
    const code = line.charCodeAt(index);
    const last = index === line.length - 1;
    const literal = (code >= 33 && code <= 126 && code !== 61) || ((code === 32 || code === 9) && !last);
    const token = literal ? line[index] : `=${code.toString(16).toUpperCase().padStart(2, '0')}`;
    if (current.length + token.length > MAX_LINE - 1) {
      out.push(`${current}=`);
      current = '';
    }
    current += token;
  }
  out.push(current);
  return out.join('\r\n');
};

/** RFC 2045 section 6.8: base64 in lines of 76 characters. */
const base64Lines = (body: Buffer): Buffer => {
  const text = body.toString('base64');
  const lines: string[] = [];
  for (let index = 0; index < text.length; index += MAX_LINE) lines.push(text.slice(index, index + MAX_LINE));
  return Buffer.from(`${lines.join('\r\n')}\r\n`, 'latin1');
};
