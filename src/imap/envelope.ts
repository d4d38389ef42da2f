import type { BodyPart, Envelope, EnvelopeAddress } from '../core/stored-message.js';
import { bytes, str, type ImapValue } from './format.js';

/**
 * ENVELOPE and BODYSTRUCTURE (RFC 3501 section 7.4.2) from the stored structure of a message
 * (src/core/stored-message.ts). Header values go out as they are on the wire (RFC 2047 words
 * undecoded), as the RFC asks.
 */

/** A header value kept as its original bytes (header fields are read as latin1). */
const hstr = (value: string | null | undefined): ImapValue =>
  value === undefined || value === null ? null : /^[\x20-\x7e]*$/.test(value) ? str(value) : bytes(Buffer.from(value, 'latin1'));

const addressList = (list: readonly EnvelopeAddress[] | null): ImapValue =>
  list === null ? null : list.map((entry) => [hstr(entry.name), null, hstr(entry.mailbox), hstr(entry.host)]);

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

const dispositionOf = (part: BodyPart): ImapValue =>
  part.disposition ? [upper(part.disposition.type), paramList(part.disposition.params)] : null;

/** body-fld-lang: one tag as a string, several as a list. */
const languageOf = (part: BodyPart): ImapValue =>
  part.language === null ? null : part.language.length === 1 ? hstr(part.language[0]) : part.language.map(hstr);

/** BODYSTRUCTURE when `extensible`, else BODY (no extension data). */
export const bodyStructureValue = (part: BodyPart, extensible: boolean): ImapValue => {
  if (part.type === 'multipart' && part.children.length > 0) {
    // body-type-mpart = 1*body SP media-subtype: the child bodies are not space-separated.
    const children = part.children.map((child) => bodyStructureValue(child, extensible));
    const extension = extensible ? [paramList(part.params), dispositionOf(part), languageOf(part), hstr(part.location)] : [];
    return [{ adjacent: children }, upper(part.subtype), ...extension];
  }
  const fields: ImapValue[] = [
    upper(part.type), upper(part.subtype), paramList(part.params), hstr(part.id), hstr(part.description), upper(part.encoding), part.size,
  ];
  const inner = part.type === 'message' && part.subtype === 'rfc822' ? part.children[0] : undefined;
  if (inner && part.envelope) {
    fields.push(envelopeValue(part.envelope), bodyStructureValue(inner, extensible), part.lines ?? 0);
  } else if (part.type === 'text') {
    fields.push(part.lines ?? 0);
  }
  if (extensible) fields.push(hstr(part.md5), dispositionOf(part), languageOf(part), hstr(part.location));
  return fields;
};
