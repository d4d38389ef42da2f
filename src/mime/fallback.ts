import libmime from 'libmime';
import { addressparser } from './nodemailer.js';
import type { ParsedMessage } from '../core/parsed-message.js';
import type { AddressEntry } from '../core/types.js';
import type { BodyPart } from '../core/stored-message.js';
import { isAttachment, leafParts } from './attachments.js';
import { firstField } from './envelope.js';
import type { HeaderField } from './mime-tree.js';
import { decodeBody } from './transfer-encoding.js';

/**
 * What a message keeps when the full parse (mailparser) fails, runs over its time budget
 * or is not tried (over the structure budget): its top-level header fields and a bounded
 * text, each in time linear in the message and cut to a fixed size.
 */

/** The most text (and HTML) a fallback keeps, in UTF-16 code units. */
export const FALLBACK_TEXT_CHARS = 1024 * 1024;
const MAX_SUBJECT_CHARS = 4096;
const MAX_REFERENCES = 200;

/** The header fields of a parsed message (src/core/parsed-message.ts). */
export type HeaderSummary = Pick<ParsedMessage, 'messageId' | 'inReplyTo' | 'references' | 'subject' | 'from' | 'to' | 'cc' | 'date'>;

/** The top-level fields a read and the inbox list show, from the message's own header. */
export const headerSummary = (headers: readonly HeaderField[]): HeaderSummary => {
  const date = firstField(headers, 'date');
  const parsedDate = date === null ? Number.NaN : Date.parse(date.replace(/\([^)]*\)/g, ' '));
  return {
    messageId: msgIds(firstField(headers, 'message-id'))[0] ?? null,
    inReplyTo: msgIds(firstField(headers, 'in-reply-to'))[0] ?? null,
    references: msgIds(firstField(headers, 'references')).slice(0, MAX_REFERENCES),
    subject: decodeWords(firstField(headers, 'subject') ?? '').slice(0, MAX_SUBJECT_CHARS),
    from: addresses(firstField(headers, 'from'))[0] ?? null,
    to: addresses(firstField(headers, 'to')),
    cc: addresses(firstField(headers, 'cc')),
    date: Number.isNaN(parsedDate) ? null : parsedDate,
  };
};

/** Header text is read as latin1; 8-bit bytes are most often UTF-8 (RFC 6532), else kept as they are. */
const fromLatin1 = (value: string): string => {
  const bytes = Buffer.from(value, 'latin1');
  const utf8 = bytes.toString('utf8');
  return utf8.includes('\uFFFD') ? value : utf8;
};

const decodeWords = (value: string): string => {
  const text = fromLatin1(value.replace(/\s+/g, ' ').trim());
  try {
    return libmime.decodeWords(text);
  } catch {
    return text;
  }
};

const msgIds = (value: string | null): string[] => (value === null ? [] : (value.match(/<[^<>\s]{1,998}>/g) ?? []));

const addresses = (value: string | null): AddressEntry[] => {
  if (value === null) return [];
  const entries: AddressEntry[] = [];
  for (const entry of addressparser(value)) {
    for (const member of entry.group ?? [entry]) {
      if (!member.address || entries.length >= 1000) continue;
      const name = decodeWords(member.name ?? '');
      entries.push(name ? { name, email: fromLatin1(member.address) } : { email: fromLatin1(member.address) });
    }
  }
  return entries;
};

/**
 * The inline text/plain parts decoded and joined (mailparser joins them with a line end),
 * and the inline text/html parts; with no plain text, the text of the HTML with its tags
 * dropped. Each is cut at FALLBACK_TEXT_CHARS.
 */
export const fallbackContent = (raw: Buffer, root: BodyPart): { text: string; html: string | null } => {
  const inline = leafParts(root).filter((leaf) => !isAttachment(leaf));
  const decoded = (type: string): string[] => inline.filter((leaf) => leaf.contentType === type).map((leaf) => decodeText(raw, leaf.part));
  const plain = bounded(decoded('text/plain').join('\n'));
  const htmlParts = decoded('text/html');
  const html = htmlParts.length > 0 ? bounded(htmlParts.join('<br/>\n')) : null;
  return { text: plain !== '' || html === null ? plain : bounded(textOfHtml(html)), html };
};

const bounded = (text: string): string => (text.length > FALLBACK_TEXT_CHARS ? text.slice(0, FALLBACK_TEXT_CHARS) : text);

/** A part's body, transfer-decoded, then decoded from its charset (UTF-8 when unknown). */
const decodeText = (raw: Buffer, part: BodyPart): string => {
  // Decoding stops at four bytes per kept character: enough for any charset, and bounded.
  const body = decodeBody(raw.subarray(part.bodyStart, Math.min(part.end, part.bodyStart + FALLBACK_TEXT_CHARS * 8)), part.encoding).subarray(
    0,
    FALLBACK_TEXT_CHARS * 4,
  );
  const charset = part.params.find(([name]) => name === 'charset')?.[1] ?? 'utf-8';
  try {
    return new TextDecoder(charset).decode(body);
  } catch {
    return new TextDecoder('utf-8').decode(body);
  }
};

const ENTITIES: Record<string, string> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'", nbsp: ' ' };
const SKIPPED_ELEMENTS = ['script', 'style', 'head'];

/** The text of HTML in one pass: tags dropped, script/style/head skipped, a few entities decoded. */
export const textOfHtml = (html: string): string => {
  const out: string[] = [];
  let index = 0;
  const lower = html.toLowerCase();
  while (index < html.length) {
    const open = html.indexOf('<', index);
    if (open === -1) {
      out.push(html.slice(index));
      break;
    }
    out.push(html.slice(index, open));
    const close = html.indexOf('>', open + 1);
    if (close === -1) break;
    const tag = /^<\s*(\/?)\s*([a-z][a-z0-9]*)/.exec(lower.slice(open, Math.min(close, open + 16)));
    const name = tag?.[2];
    index = close + 1;
    if (name && !tag[1] && SKIPPED_ELEMENTS.includes(name)) {
      const end = lower.indexOf(`</${name}`, index);
      index = end === -1 ? html.length : end;
    }
    if (name && /^(p|div|br|li|tr|h[1-6])$/.test(name)) out.push('\n');
  }
  return out
    .join('')
    .replace(/&(#\d{1,7}|#x[0-9a-f]{1,6}|[a-z]{2,6});/gi, (entity, code: string) => decodeEntity(entity, code))
    .replace(/[ \t]+/g, ' ')
    .replace(/\n\s*\n\s*/g, '\n\n')
    .trim();
};

const decodeEntity = (entity: string, code: string): string => {
  if (code[0] !== '#') return ENTITIES[code.toLowerCase()] ?? entity;
  const point = code[1] === 'x' || code[1] === 'X' ? Number.parseInt(code.slice(2), 16) : Number.parseInt(code.slice(1), 10);
  return point > 0 && point <= 0x10ffff ? String.fromCodePoint(point) : entity;
};
