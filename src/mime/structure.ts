import type { BodyPart, Disposition, MessageStructure, StoredBody } from '../core/stored-message.js';
import { wireLength, wireLines } from './crlf.js';
import { envelopeOf, firstField } from './envelope.js';
import { encapsulatedMessage, parseDisposition, parseMimeTree, type MimePart } from './mime-tree.js';

/**
 * The stored MIME structure of a message (src/core/stored-message.ts) from its raw bytes.
 * Linear in the message size and bounded by the tree's budget (mime-tree.ts: MAX_DEPTH,
 * MAX_PARTS); header values are cut at MAX_FIELD_CHARS (envelope.ts).
 */
export const structureOf = (raw: Buffer, tree: MimePart = parseMimeTree(raw)): MessageStructure => ({
  envelope: envelopeOf(tree.headers),
  root: bodyPartOf(raw, tree, ''),
  size: wireLength(raw),
});

/**
 * RFC 3501 section 6.4.5 numbering: a multipart's children are S.1, S.2, ... (1, 2, ...
 * under the root); the message a message/rfc822 part carries takes the part's own number,
 * and the root's carried message (a message whose whole body is a message/rfc822) is 1.
 */
const bodyPartOf = (raw: Buffer, part: MimePart, section: string): BodyPart => {
  const { contentType, headers } = part;
  const inner = encapsulatedMessage(part);
  const childSection = (index: number): string =>
    contentType.type === 'multipart' ? (section === '' ? String(index + 1) : `${section}.${index + 1}`) : section === '' ? '1' : section;
  const isText = contentType.type === 'text';
  const isMessage = contentType.type === 'message' && contentType.subtype === 'rfc822';
  return {
    section,
    type: contentType.type,
    subtype: contentType.subtype,
    params: contentType.params.map(([name, value]) => [name, value.slice(0, 1024)]),
    id: firstField(headers, 'content-id'),
    description: firstField(headers, 'content-description'),
    md5: firstField(headers, 'content-md5'),
    location: firstField(headers, 'content-location'),
    encoding: (firstField(headers, 'content-transfer-encoding') ?? '7bit').trim().toLowerCase() || '7bit',
    disposition: dispositionOf(firstField(headers, 'content-disposition')),
    language: languagesOf(firstField(headers, 'content-language')),
    headerStart: part.start,
    bodyStart: part.bodyStart,
    end: part.end,
    size: wireLength(raw, part.bodyStart, part.end),
    lines: isText || isMessage ? wireLines(raw, part.bodyStart, part.end) : null,
    envelope: inner ? envelopeOf(inner.headers) : null,
    children: part.children.map((child, index) => bodyPartOf(raw, child, childSection(index))),
    truncated: part.truncated,
  };
};

const dispositionOf = (value: string | null): Disposition | null => {
  const parsed = value === null ? null : parseDisposition(value);
  return parsed ? { type: parsed.kind, params: parsed.params.map(([name, param]) => [name, param.slice(0, 1024)]) } : null;
};

/** RFC 3282: a comma-separated list of language tags. */
const languagesOf = (value: string | null): string[] | null => {
  if (value === null) return null;
  const tags = value
    .split(',')
    .map((tag) => tag.trim())
    .filter(Boolean)
    .slice(0, 32);
  return tags.length > 0 ? tags : null;
};

/** Every part of the tree, depth first, in section order. */
export const eachPart = function* (part: BodyPart): Generator<BodyPart> {
  yield part;
  for (const child of part.children) yield* eachPart(child);
};

/**
 * The stored body of a message once `prefix` bytes are put before its raw bytes (our
 * Received header, RFC 5321 section 4.4): every offset moves by that much, and the root's
 * header now starts with the prefix.
 */
export const withPrefix = (body: StoredBody, prefix: number): StoredBody => {
  if (prefix === 0) return body;
  const shift = (part: BodyPart): BodyPart => ({
    ...part,
    headerStart: part.section === '' && part.headerStart === 0 ? 0 : part.headerStart + prefix,
    bodyStart: part.bodyStart + prefix,
    end: part.end + prefix,
    children: part.children.map(shift),
  });
  return {
    ...body,
    structure: { ...body.structure, root: shift(body.structure.root), size: body.structure.size + prefix },
    plainTextStart: body.plainTextStart === null ? null : body.plainTextStart + prefix,
    content: {
      ...body.content,
      attachments: body.content.attachments.map((item) => ({ ...item, bodyStart: item.bodyStart + prefix, end: item.end + prefix })),
    },
  };
};
