import type { AddressEntry } from '../core/types.js';
import type { HeaderSummary } from './fallback.js';
import type { MimePart } from './mime-tree.js';
import { decodeBody } from './transfer-encoding.js';

/**
 * mailparser's result for the commonest shapes of mail, without running mailparser: one
 * text/plain part, or a multipart/alternative of a text/plain and a text/html part, either
 * alone or first in a multipart/mixed whose other parts are attachments; text in UTF-8,
 * US-ASCII, ISO-8859-1 or windows-1252, under a header of printable ASCII whose address fields are plain
 * `Name <local@domain>` lists. mailparser's stream pipeline was most of the whole parse's CPU
 * (docs/contributing/benchmarks.md), and it decodes and checksums every attachment,
 * which nothing here needs (the tree gives their places and sizes).
 *
 * Every message it takes gets exactly what the mailparser path gives (test/simple-shape.test.ts
 * compares the two on generated messages); anything outside the shape returns null, and the
 * caller runs mailparser. So each rule below is a condition, not an interpretation:
 * - header lines end in CRLF and hold only printable ASCII and tabs, so both parsers split
 *   them alike; no RFC 2047 encoded word (`=?`), so there is nothing to decode;
 * - the fields read here occur at most once (mailparser keeps the last, the tree the first);
 * - no Content-Disposition, no `format=flowed` (mailparser unwraps flowed text, RFC 3676).
 */

/** The fields mailparser reads for the summary, and the ones that decide the shape. */
const SINGLE_FIELDS = new Set([
  'subject',
  'from',
  'to',
  'cc',
  'date',
  'message-id',
  'in-reply-to',
  'references',
  'content-type',
  'content-transfer-encoding',
  'content-disposition',
]);

const CLEAN_HEADER = /^(?:[\t\x20-\x7e]*\r\n)*\r\n$/;
const FIELD_LINE = /^([!-9;-~]+):/;
const PLAIN_TYPE = /^text\/plain(?:\s*;\s*charset=("?)(utf-8|us-ascii|iso-8859-1|windows-1252)\1)?$/i;
const HTML_TYPE = /^text\/html(?:\s*;\s*charset=("?)(utf-8|us-ascii|iso-8859-1|windows-1252)\1)?$/i;
/**
 * windows-1252's characters for the bytes 0x80 to 0x9F (above them it is ISO-8859-1), from
 * its published table; U+0000 where it defines none (0x81, 0x8D, 0x8F, 0x90, 0x9D). Written out
 * because Node's TextDecoder('windows-1252') reads those bytes as ISO-8859-1 on some versions.
 */
const WINDOWS_1252_C1 =
  '\u20ac\u0000\u201a\u0192\u201e\u2026\u2020\u2021\u02c6\u2030\u0160\u2039\u0152\u0000\u017d\u0000' +
  '\u0000\u2018\u2019\u201c\u201d\u2022\u2013\u2014\u02dc\u2122\u0161\u203a\u0153\u0000\u017e\u0178';
const ALTERNATIVE_TYPE = /^multipart\/alternative;\s*boundary=("?)[A-Za-z0-9_.=-]{1,70}\1$/i;
const MIXED_TYPE = /^multipart\/mixed;\s*boundary=("?)[A-Za-z0-9_.=-]{1,70}\1$/i;
/** A type mailparser always takes as an attachment: never text, a message or a multipart. */
const ATTACHMENT_TYPE = /^(?:application|image|audio|video|font|model)\/[A-Za-z0-9.+_-]+(?:\s*;.*)?$/i;
const ENCODING = /^(?:7bit|8bit|binary|quoted-printable|base64)$/i;
/** Base64 that every decoder reads alike: whole quartets, padding only at the very end. */
const PLAIN_BASE64 = /^(?:[A-Za-z0-9+/]{4}|\r\n)*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?(?:\r\n)*$/;

export interface SimpleShape {
  summary: HeaderSummary;
  text: string;
  html: string | null;
}

type Texts = Pick<SimpleShape, 'text' | 'html'>;

export const simpleShapeOf = (raw: Buffer, tree: MimePart): SimpleShape | null => {
  const fields = partFields(raw, tree);
  const summary = fields && summaryOf(fields);
  if (!fields || !summary) return null;
  const texts = MIXED_TYPE.test(fields.get('content-type') ?? '') ? mixed(raw, tree) : content(raw, tree, fields);
  return texts && { summary, ...texts };
};

/** One text/plain leaf, or a text/plain and text/html alternative. */
const content = (raw: Buffer, part: MimePart, fields: Map<string, string>): Texts | null => {
  if (part.children.length > 0) return ALTERNATIVE_TYPE.test(fields.get('content-type') ?? '') ? alternative(raw, part) : null;
  const text = partText(raw, part, fields, PLAIN_TYPE);
  return text === null ? null : { text, html: null };
};

/**
 * A text/plain and a text/html alternative (RFC 2046 section 5.1.4): mailparser's text is the
 * plain part's, its HTML the HTML part's, each left out when empty.
 */
const alternative = (raw: Buffer, part: MimePart): Texts | null => {
  if (part.children.length !== 2 || part.children.some(isEmpty)) return null;
  const [plain, rich] = part.children;
  const plainFields = partFields(raw, plain);
  const richFields = partFields(raw, rich);
  const text = plainFields && partText(raw, plain, plainFields, PLAIN_TYPE);
  const html = richFields && partText(raw, rich, richFields, HTML_TYPE);
  if (text === null || html === null) return null;
  return { text, html: html === '' ? null : html };
};

/**
 * The content first, then attachments (RFC 2046 section 5.1.3), each of a type mailparser can
 * only take as an attachment, so they add nothing to the text or HTML (their places and sizes
 * come from the tree, as for every message).
 */
const mixed = (raw: Buffer, part: MimePart): Texts | null => {
  const [first, ...attachments] = part.children;
  if (first === undefined || part.children.some(isEmpty) || !attachments.every((child) => isAttachmentLeaf(raw, child))) return null;
  const fields = partFields(raw, first);
  return fields && content(raw, first, fields);
};

// mailsplit reads an empty part's body as the line break before the next boundary: left to it.
const isEmpty = (part: MimePart): boolean => part.bodyStart >= part.end;

const isAttachmentLeaf = (raw: Buffer, part: MimePart): boolean => {
  if (part.children.length > 0) return false;
  const type = headerFields(raw.toString('latin1', part.start, part.bodyStart))?.get('content-type');
  return type !== undefined && ATTACHMENT_TYPE.test(type);
};

/** A part's header fields, null outside the shape (or with a Content-Disposition). */
const partFields = (raw: Buffer, part: MimePart): Map<string, string> | null => {
  const fields = headerFields(raw.toString('latin1', part.start, part.bodyStart));
  return fields === null || fields.has('content-disposition') ? null : fields;
};

/** A leaf's text as mailparser reads it (decoded, as UTF-8, LF line ends), or null outside the shape. */
const partText = (raw: Buffer, part: MimePart, fields: Map<string, string>, type: RegExp): string | null => {
  const contentType = fields.get('content-type');
  const encoding = fields.get('content-transfer-encoding');
  // An absent Content-Type is text/plain (RFC 2045 section 5.2), in the root and in an alternative.
  const match = contentType === undefined ? (type === PLAIN_TYPE ? [] : null) : type.exec(contentType);
  if (match === null || (encoding !== undefined && !ENCODING.test(encoding))) return null;
  const body = decodedBody(raw.subarray(part.bodyStart, part.end), (encoding ?? '').toLowerCase());
  const text = body && decodedText(body, (match[2] ?? 'utf-8').toLowerCase());
  return text === null ? null : text.replace(/\r?\n/g, '\n');
};

/**
 * The text of the decoded body in its charset, as mailparser reads it: UTF-8 and US-ASCII as
 * UTF-8; ISO-8859-1 as windows-1252 (libmime's normalizeCharset maps it there, as WHATWG
 * does) through iconv-lite, which gives U+FFFD for an undefined byte: such a body is left to it.
 */
const decodedText = (body: Buffer, charset: string): string | null => {
  if (charset === 'utf-8' || charset === 'us-ascii') return body.toString('utf8');
  let undefinedByte = false;
  const text = body.toString('latin1').replace(/[\x80-\x9f]/g, (char) => {
    const mapped = WINDOWS_1252_C1[char.charCodeAt(0) - 0x80];
    undefinedByte ||= mapped === '\u0000';
    return mapped;
  });
  return undefinedByte ? null : text;
};

/** The body as mailsplit's decoders give it; null for base64 they might split differently. */
const decodedBody = (body: Buffer, encoding: string): Buffer | null => {
  if (encoding === 'quoted-printable') return libqpDecode(body);
  if (encoding === 'base64' && !PLAIN_BASE64.test(body.toString('latin1'))) return null;
  return decodeBody(body, encoding);
};

/**
 * Quoted-printable as libqp (mailsplit's decoder) reads it, which differs from
 * transfer-encoding.ts at the edges: blanks at a line end are dropped, and "=" followed by
 * anything but two hex digits stays as it is (RFC 2045 section 6.7, notes 1 and 3).
 */
const libqpDecode = (body: Buffer): Buffer => {
  const text = body
    .toString('latin1')
    .replace(/[\t ]+$/gm, '')
    .replace(/=(?:\r?\n|$)/g, '');
  return Buffer.from(
    text.replace(/=([\da-fA-F]{2})/g, (_, hex: string) => String.fromCharCode(Number.parseInt(hex, 16))),
    'latin1',
  );
};

/**
 * The header's fields by lowercased name, each value unfolded as libmime's decodeHeader does
 * (a line break and the blanks after it become one space) and trimmed; null when the header
 * is outside the shape.
 */
const headerFields = (header: string): Map<string, string> | null => {
  if (!CLEAN_HEADER.test(header)) return null;
  const fields = new Map<string, string>();
  const lines = header.slice(0, -2).split('\r\n');
  lines.pop();
  let name: string | null = null;
  let value = '';
  const flush = (): boolean => {
    if (name === null || !SINGLE_FIELDS.has(name)) return true;
    if (fields.has(name) || value.includes('=?')) return false;
    fields.set(name, value.trim());
    return true;
  };
  for (const line of lines) {
    if (line[0] === ' ' || line[0] === '\t') {
      // A folded Date is unfolded differently by mailparser's two readings of it (parse.ts dateOf).
      if (name === null || name === 'date') return null;
      value = `${value} ${line.trimStart()}`;
      continue;
    }
    const match = FIELD_LINE.exec(line);
    if (match === null || !flush()) return null;
    name = match[1].toLowerCase();
    value = line.slice(match[0].length);
  }
  return flush() ? fields : null;
};

const summaryOf = (fields: Map<string, string>): HeaderSummary | null => {
  const from = addressesOf(fields.get('from'));
  const to = addressesOf(fields.get('to'));
  const cc = addressesOf(fields.get('cc'));
  if (from === null || to === null || cc === null) return null;
  return {
    messageId: messageIdOf(fields.get('message-id')),
    inReplyTo: messageIdOf(fields.get('in-reply-to')),
    references: (fields.get('references') ?? '').split(/\s+/).flatMap((id) => messageIdOf(id) ?? []),
    subject: fields.get('subject') ?? '',
    from: from[0] ?? null,
    to,
    cc,
    date: dateOf(fields.get('date')),
  };
};

/** mailparser's ensureMessageIDFormat: angle brackets added where missing. */
const messageIdOf = (value: string | undefined): string | null => {
  if (!value) return null;
  return `${value.startsWith('<') ? '' : '<'}${value}${value.endsWith('>') ? '' : '>'}`;
};

/** The Date's time, or null where mailparser cannot read it (parse.ts drops mailparser's stand-in). */
const dateOf = (value: string | undefined): number | null => {
  if (value === undefined) return null;
  const time = new Date(value).getTime();
  return Number.isNaN(time) ? null : time;
};

const ADDR_SPEC = '[A-Za-z0-9._%+-]+@[A-Za-z0-9-]+(?:\\.[A-Za-z0-9-]+)*';
const WORDS = "[A-Za-z0-9._'-]+(?: [A-Za-z0-9._'-]+)*";
/** One mailbox: a bare address, `<address>`, `Words <address>` or `"Words" <address>`. */
const MAILBOX = new RegExp(`^(?:(${ADDR_SPEC})|(?:(${WORDS}) |"(${WORDS})" ?)?<(${ADDR_SPEC})>)$`);

/** A plain address list, as addressparser reads it; null for anything else (comments, groups, IDNA). */
const addressesOf = (value: string | undefined): AddressEntry[] | null => {
  if (value === undefined || value === '') return [];
  const entries: AddressEntry[] = [];
  for (const item of value.split(',')) {
    const match = MAILBOX.exec(item.trim());
    if (match === null) return null;
    const email = match[1] ?? match[4];
    const name = match[2] ?? match[3];
    if (email.toLowerCase().includes('xn--')) return null;
    entries.push(name ? { name, email } : { email });
  }
  return entries;
};
