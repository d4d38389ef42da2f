import type { BodyPart, Envelope, MessageStructure } from '../core/stored-message.js';

/**
 * How a stored body's structure is kept compact (migration 11; its texts: src/core/packed-text.ts):
 * JSON without its default values (null, false, empty lists), and without the ENVELOPE's
 * sender and reply-to when they equal from; reading restores them.
 */

const isDefault = (value: unknown): boolean => value === null || value === false || (Array.isArray(value) && value.length === 0);

/** Drops default values, so unpackStructure can restore them. */
const withoutDefaults = (_key: string, value: unknown): unknown => (isDefault(value) ? undefined : value);

export const packStructure = (structure: MessageStructure): string => {
  const envelope = compactEnvelope(structure.envelope);
  return JSON.stringify({ envelope, root: structure.root, size: structure.size }, withoutDefaults);
};

const compactEnvelope = (envelope: Envelope): Partial<Envelope> => {
  // envelopeOf defaults both to from, so they are null only when from is.
  const same = (list: Envelope['sender']) => JSON.stringify(list) === JSON.stringify(envelope.from);
  const { sender, replyTo, ...rest } = envelope;
  return { ...rest, ...(same(sender) ? {} : { sender }), ...(same(replyTo) ? {} : { replyTo }) };
};

export const unpackStructure = (json: string): MessageStructure => {
  const packed = JSON.parse(json) as { envelope: Partial<Envelope>; root: Partial<BodyPart>; size?: number };
  return { envelope: fullEnvelope(packed.envelope), root: fullPart(packed.root), size: packed.size ?? 0 };
};

/** An absent sender or reply-to was equal to from. */
const fullEnvelope = (packed: Partial<Envelope>): Envelope => {
  const from = addresses(packed.from);
  const defaulted = (list: Envelope['sender'] | undefined) => (list === undefined ? from : addresses(list));
  return {
    date: packed.date ?? null,
    subject: packed.subject ?? null,
    from,
    sender: defaulted(packed.sender),
    replyTo: defaulted(packed.replyTo),
    to: addresses(packed.to),
    cc: addresses(packed.cc),
    bcc: addresses(packed.bcc),
    inReplyTo: packed.inReplyTo ?? null,
    messageId: packed.messageId ?? null,
  };
};

const addresses = (list: Envelope['from'] | undefined): Envelope['from'] =>
  list === undefined || list === null || list.length === 0
    ? null
    : list.map((entry) => ({ name: entry.name ?? null, adl: null, mailbox: entry.mailbox ?? null, host: entry.host ?? null }));

const fullPart = (packed: Partial<BodyPart>): BodyPart => ({
  section: packed.section ?? '',
  type: packed.type ?? 'text',
  subtype: packed.subtype ?? 'plain',
  params: packed.params ?? [],
  id: packed.id ?? null,
  description: packed.description ?? null,
  md5: packed.md5 ?? null,
  location: packed.location ?? null,
  encoding: packed.encoding ?? '7bit',
  disposition: packed.disposition ? { type: packed.disposition.type, params: packed.disposition.params ?? [] } : null,
  language: packed.language ?? null,
  headerStart: packed.headerStart ?? 0,
  bodyStart: packed.bodyStart ?? 0,
  end: packed.end ?? 0,
  size: packed.size ?? 0,
  lines: packed.lines ?? null,
  envelope: packed.envelope ? fullEnvelope(packed.envelope) : null,
  children: (packed.children ?? []).map(fullPart),
  truncated: packed.truncated ?? false,
});
