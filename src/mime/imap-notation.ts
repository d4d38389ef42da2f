import type { BodyPart, Envelope, EnvelopeAddress, MessageStructure } from '../core/stored-message.js';

/**
 * IMAP's notation for data (RFC 3501 section 4: atoms, strings, literals, NIL, lists), and
 * ENVELOPE and BODYSTRUCTURE (section 7.4.2) of a stored structure in it. Pure code: the IMAP
 * adapter writes every response with it, and a parse worker writes a message's ENVELOPE and
 * BODYSTRUCTURE once, at ingest, so a FETCH sends them from the row as they are.
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

/** A string goes out quoted when it is short 7-bit text, otherwise as a literal, so any bytes are safe to send. */
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

/** The wire bytes of a value as a latin1 string (one character per byte), which crosses threads and stores as-is. */
export const wireString = (value: ImapValue): string =>
  serialize(value)
    .map((chunk) => (typeof chunk === 'string' ? chunk : chunk.toString('latin1')))
    .join('');

/** A header value kept as its original bytes (header fields are read as latin1). */
const hstr = (value: string | null | undefined): ImapValue =>
  value === undefined || value === null ? null : /^[\x20-\x7e]*$/.test(value) ? str(value) : bytes(Buffer.from(value, 'latin1'));

/** env-from etc. = "(" 1*address ")": the addresses are not space-separated (RFC 3501 section 9). */
const addressList = (list: readonly EnvelopeAddress[] | null): ImapValue =>
  list === null ? null : [{ adjacent: list.map((entry) => [hstr(entry.name), null, hstr(entry.mailbox), hstr(entry.host)]) }];

/** ENVELOPE: header values as they are on the wire (RFC 2047 words undecoded), as the RFC asks. */
export const envelopeValue = (envelope: Envelope): ImapValue => [
  hstr(envelope.date),
  hstr(envelope.subject),
  addressList(envelope.from),
  addressList(envelope.sender),
  addressList(envelope.replyTo),
  addressList(envelope.to),
  addressList(envelope.cc),
  addressList(envelope.bcc),
  hstr(envelope.inReplyTo),
  hstr(envelope.messageId),
];

const upper = (value: string): ImapValue => str(value.toUpperCase());

const paramList = (params: readonly [string, string][]): ImapValue =>
  params.length === 0 ? null : params.flatMap(([name, value]) => [upper(name), hstr(value)]);

/** A text part names its charset; without one it is US-ASCII (RFC 2045 section 5.2), which Dovecot says too. */
const typeParams = (part: BodyPart): ImapValue =>
  paramList(part.type === 'text' && !part.params.some(([name]) => name === 'charset') ? [...part.params, ['charset', 'us-ascii']] : part.params);

const dispositionOf = (part: BodyPart): ImapValue => (part.disposition ? [upper(part.disposition.type), paramList(part.disposition.params)] : null);

/** body-fld-lang: one tag as a string, several as a list. */
const languageOf = (part: BodyPart): ImapValue =>
  part.language === null ? null : part.language.length === 1 ? hstr(part.language[0]) : part.language.map(hstr);

/** BODYSTRUCTURE when `extensible`, else BODY (no extension data). Sizes and lines are of the CRLF form sent. */
export const bodyStructureValue = (part: BodyPart, extensible: boolean): ImapValue => {
  if (part.type === 'multipart' && part.children.length > 0) {
    // body-type-mpart = 1*body SP media-subtype: the child bodies are not space-separated.
    const children = part.children.map((child) => bodyStructureValue(child, extensible));
    const extension = extensible ? [paramList(part.params), dispositionOf(part), languageOf(part), hstr(part.location)] : [];
    return [{ adjacent: children }, upper(part.subtype), ...extension];
  }
  const fields: ImapValue[] = [upper(part.type), upper(part.subtype), typeParams(part), hstr(part.id), hstr(part.description), upper(part.encoding), part.size];
  const inner = part.type === 'message' && part.subtype === 'rfc822' ? part.children[0] : undefined;
  if (inner && part.envelope) {
    fields.push(envelopeValue(part.envelope), bodyStructureValue(inner, extensible), part.lines ?? 0);
  } else if (part.type === 'text') {
    fields.push(part.lines ?? 0);
  }
  if (extensible) fields.push(hstr(part.md5), dispositionOf(part), languageOf(part), hstr(part.location));
  return fields;
};

/** What a FETCH of ENVELOPE and BODYSTRUCTURE sends, written once when the body is stored. */
export interface StructureWire {
  envelope: string;
  bodyStructure: string;
}

export const structureWire = (structure: MessageStructure): StructureWire => ({
  envelope: wireString(envelopeValue(structure.envelope)),
  bodyStructure: wireString(bodyStructureValue(structure.root, true)),
});
