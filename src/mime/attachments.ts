import libmime from 'libmime';
import type { BodyPart, StoredAttachment } from '../core/stored-message.js';
import { decodedLength } from './transfer-encoding.js';

/**
 * The attachments of a message, found in its stored structure by the rule mailparser
 * applies, so a read lists what it always listed: every leaf part that is not an inline
 * text/plain, text/html or message/delivery-status part. A message/rfc822 part is looked
 * into (its attachments are the message's); one the structure budget left opaque is an
 * attachment itself. Each is located in the raw message, so a read decodes only its bytes.
 */
export const TEXT_TYPES = new Set(['text/plain', 'text/html', 'message/delivery-status']);

/** A leaf part of the body: what a read may show as text, HTML or an attachment. */
export interface LeafPart {
  part: BodyPart;
  /** Its RFC 3501 section number (a message's own body is its section + ".1", or "1" at the top). */
  section: string;
  /** `type/subtype` as mailparser sees it (src/mime/attachments.ts). */
  contentType: string;
  /** `inline` or `attachment` (RFC 2183), as mailparser normalizes it. */
  disposition: 'inline' | 'attachment';
  filename: string | null;
}

export const leafParts = (root: BodyPart): LeafPart[] => {
  const leaves: LeafPart[] = [];
  const walk = (part: BodyPart, isMessageRoot: boolean): void => {
    if (part.type === 'multipart' && part.children.length > 0) {
      for (const child of part.children) walk(child, false);
      return;
    }
    if (part.type === 'message' && part.subtype === 'rfc822' && part.children.length === 1) {
      walk(part.children[0], true);
      return;
    }
    const section = isMessageRoot ? (part.section === '' ? '1' : `${part.section}.1`) : part.section;
    leaves.push(describeLeaf(part, section));
  };
  walk(root, true);
  return leaves;
};

const describeLeaf = (part: BodyPart, section: string): LeafPart => {
  const dispositionType = part.disposition?.type;
  const filename = filenameOf(part);
  const contentType = `${part.type}/${part.subtype}`;
  const isText = TEXT_TYPES.has(contentType);
  // mailparser: an unknown disposition is an attachment; none means inline only for text types.
  const disposition = dispositionType === undefined ? (isText ? 'inline' : 'attachment') : dispositionType === 'inline' ? 'inline' : 'attachment';
  return { part, section, contentType, disposition, filename };
};

export const isAttachment = (leaf: LeafPart): boolean => !TEXT_TYPES.has(leaf.contentType) || leaf.disposition !== 'inline';

export const attachmentsOf = (raw: Buffer, root: BodyPart): StoredAttachment[] =>
  leafParts(root)
    .filter(isAttachment)
    .map((leaf) => {
      const { part } = leaf;
      // An octet stream with a file name gets the type its extension names, as mailparser does.
      const contentType = leaf.contentType === 'application/octet-stream' && leaf.filename ? libmime.detectMimeType(leaf.filename) : leaf.contentType;
      return {
        filename: leaf.filename,
        contentType,
        size: decodedLength(raw.subarray(part.bodyStart, part.end), part.encoding),
        section: leaf.section,
        encoding: part.encoding,
        bodyStart: part.bodyStart,
        end: part.end,
      };
    });

/** The file name: Content-Disposition filename, else Content-Type name (RFC 2183, RFC 2231, RFC 2047 decoded). */
const filenameOf = (part: BodyPart): string | null => {
  const raw = paramValue(part.disposition?.params, 'filename') ?? paramValue(part.params, 'name');
  if (raw === null) return null;
  try {
    return libmime.decodeWords(raw).slice(0, 1024) || null;
  } catch {
    return raw.slice(0, 1024) || null;
  }
};

/**
 * A parameter's value, RFC 2231 continuations (name*0, name*1*) and charset joined by
 * libmime from the parameters as stored.
 */
const paramValue = (params: [string, string][] | undefined, name: string): string | null => {
  if (!params) return null;
  const related = params.filter(([key]) => key === name || key.startsWith(`${name}*`));
  if (related.length === 0) return null;
  const header = `x; ${related.map(([key, value]) => `${key}=${key.endsWith('*') ? value : JSON.stringify(value)}`).join('; ')}`;
  return libmime.parseHeaderValue(header).params[name] ?? null;
};
