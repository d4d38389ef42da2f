import addressparser from 'nodemailer/lib/addressparser/index.js';
import {
  encapsulatedMessage, parseDisposition, parseHeaderFields, type HeaderField, type MimePart,
} from '../mime/mime-tree.js';
import { bytes, str, type ImapValue } from './format.js';

/**
 * ENVELOPE and BODYSTRUCTURE (RFC 3501 section 7.4.2) from a message's MIME tree. Header
 * values go out as they are on the wire (RFC 2047 words undecoded), as the RFC asks.
 */

/** A header value kept as its original bytes (header fields are read as latin1). */
const hstr = (value: string | undefined): ImapValue =>
  value === undefined ? null : /^[\x20-\x7e]*$/.test(value) ? str(value) : bytes(Buffer.from(value, 'latin1'));

const first = (headers: readonly HeaderField[], name: string): string | undefined =>
  headers.find((field) => field.name === name)?.value;

const addressList = (value: string | undefined): ImapValue => {
  if (value === undefined || value.trim() === '') return null;
  const out: ImapValue[] = [];
  for (const entry of addressparser(value)) {
    if ('group' in entry) {
      // RFC 3501: a group starts with (NIL NIL "name" NIL) and ends with (NIL NIL NIL NIL).
      out.push([null, null, hstr(entry.name), null]);
      for (const member of entry.group) out.push(address(member.name, member.address));
      out.push([null, null, null, null]);
    } else if (entry.address) {
      out.push(address(entry.name, entry.address));
    }
  }
  return out.length > 0 ? out : null;
};

const address = (name: string, email: string): ImapValue => {
  const at = email.lastIndexOf('@');
  const mailbox = at === -1 ? email : email.slice(0, at);
  const host = at === -1 ? 'MISSING_DOMAIN' : email.slice(at + 1);
  return [name ? hstr(name) : null, null, hstr(mailbox), hstr(host)];
};

export const envelopeOf = (header: Buffer): ImapValue => envelopeFromFields(parseHeaderFields(header));

const envelopeFromFields = (headers: readonly HeaderField[]): ImapValue => {
  const from = addressList(first(headers, 'from'));
  const sender = addressList(first(headers, 'sender'));
  const replyTo = addressList(first(headers, 'reply-to'));
  return [
    hstr(first(headers, 'date')),
    hstr(first(headers, 'subject')),
    from,
    sender ?? from,
    replyTo ?? from,
    addressList(first(headers, 'to')),
    addressList(first(headers, 'cc')),
    addressList(first(headers, 'bcc')),
    hstr(first(headers, 'in-reply-to')),
    hstr(first(headers, 'message-id')),
  ];
};

const upper = (value: string): ImapValue => str(value.toUpperCase());

const paramList = (params: readonly [string, string][]): ImapValue =>
  params.length === 0 ? null : params.flatMap(([name, value]) => [upper(name), hstr(value)]);

const dispositionOf = (part: MimePart): ImapValue => {
  const parsed = parseDisposition(first(part.headers, 'content-disposition') ?? '');
  return parsed ? [upper(parsed.kind), paramList(parsed.params)] : null;
};

const countLines = (raw: Buffer, start: number, end: number): number => {
  let lines = 0;
  for (let index = raw.indexOf(0x0a, start); index !== -1 && index < end; index = raw.indexOf(0x0a, index + 1)) lines += 1;
  return end > start && raw[end - 1] !== 0x0a ? lines + 1 : lines;
};

/** BODYSTRUCTURE when `extensible`, else BODY (no extension data). */
export const bodyStructureOf = (raw: Buffer, part: MimePart, extensible: boolean): ImapValue => {
  const { contentType } = part;
  if (contentType.type === 'multipart' && part.children.length > 0) {
    // body-type-mpart = 1*body SP media-subtype: the child bodies are not space-separated.
    const children = part.children.map((child) => bodyStructureOf(raw, child, extensible));
    const extension = extensible
      ? [paramList(contentType.params), dispositionOf(part), hstr(first(part.headers, 'content-language')), hstr(first(part.headers, 'content-location'))]
      : [];
    return [{ adjacent: children }, upper(contentType.subtype), ...extension];
  }
  const size = part.end - part.bodyStart;
  const fields: ImapValue[] = [
    upper(contentType.type), upper(contentType.subtype), paramList(contentType.params),
    hstr(first(part.headers, 'content-id')), hstr(first(part.headers, 'content-description')),
    upper(first(part.headers, 'content-transfer-encoding') ?? '7bit'), size,
  ];
  const inner = encapsulatedMessage(part);
  if (inner) {
    fields.push(envelopeFromFields(inner.headers), bodyStructureOf(raw, inner, extensible), countLines(raw, part.bodyStart, part.end));
  } else if (contentType.type === 'text') {
    fields.push(countLines(raw, part.bodyStart, part.end));
  }
  if (extensible) {
    fields.push(hstr(first(part.headers, 'content-md5')), dispositionOf(part), hstr(first(part.headers, 'content-language')), hstr(first(part.headers, 'content-location')));
  }
  return fields;
};
