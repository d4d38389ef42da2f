import type { BodyPart } from '../core/stored-message.js';
import { headerBlocks } from '../mime/mime-tree.js';
import type { FetchRow } from '../services/imap/session.js';
import type { ImapMailService } from '../services/imap/mail.js';
import type { Section } from './fetch-items.js';

/**
 * The bytes of BODY[section] (RFC 3501 section 6.4.5), served from the part offsets ingest
 * stored: only the bytes a section names are read, and nothing is parsed again. A part that
 * does not exist is empty.
 */
export const sectionBytes = async (mail: ImapMailService, row: FetchRow, section: Section): Promise<Buffer> => {
  if (section.path.length === 0 && section.spec === 'ALL') return await mail.raw(row.rowId);
  const { root } = await mail.structure(row.rowId);
  const range = (start: number, end: number) => mail.rawRange(row.rowId, start, end);
  if (section.path.length === 0) {
    if (section.spec === 'TEXT') return await range(root.bodyStart, root.end);
    const header = await range(0, root.bodyStart);
    return section.spec === 'HEADER' ? header : filterHeader(header, section);
  }
  const part = findPart(root, section.path);
  if (!part) return Buffer.alloc(0);
  if (section.spec === 'ALL') return await range(part.bodyStart, part.end);
  if (section.spec === 'MIME') return await range(part.headerStart, part.bodyStart);
  // HEADER and TEXT of a part name the message a message/rfc822 part carries.
  const message = encapsulated(part);
  if (!message) return Buffer.alloc(0);
  if (section.spec === 'TEXT') return await range(message.bodyStart, message.end);
  const header = await range(message.headerStart, message.bodyStart);
  return section.spec === 'HEADER' ? header : filterHeader(header, section);
};

const encapsulated = (part: BodyPart): BodyPart | null =>
  part.type === 'message' && part.subtype === 'rfc822' && part.children.length === 1 && !part.truncated ? part.children[0] : null;

/**
 * RFC 3501 section 6.4.5 part numbers: in a multipart, N is the Nth child; a message that
 * is not multipart has one part, 1, its body; a message/rfc822 part's sub-parts are those
 * of the message it carries.
 */
export const findPart = (root: BodyPart, path: readonly number[]): BodyPart | null => {
  let node = root;
  let isMessage = true;
  for (const number of path) {
    let carried = encapsulated(node);
    if (!isMessage && carried) {
      node = carried;
      isMessage = true;
      carried = encapsulated(node);
    }
    if (node.type === 'multipart' && !node.truncated) {
      const child = node.children[number - 1];
      if (!child) return null;
      node = child;
      isMessage = false;
    } else if (number === 1 && (isMessage || !carried)) {
      // Part 1 of a message that is not multipart is its body (RFC 3501 section 6.4.5); of any
      // other single part, the part itself, as Dovecot answers it.
      isMessage = false;
    } else {
      return null;
    }
  }
  return node;
};

/** HEADER.FIELDS (and .NOT): the matching fields as stored, then the blank line. */
const filterHeader = (header: Buffer, section: Section): Buffer => {
  const wanted = new Set(section.fields);
  const keep = section.spec === 'HEADER.FIELDS';
  const blocks = headerBlocks(header).filter((block) => block.name !== '' && wanted.has(block.name) === keep);
  return Buffer.concat([...blocks.map((block) => withLineEnd(block.bytes)), Buffer.from('\r\n')]);
};

const withLineEnd = (block: Buffer): Buffer => (block[block.length - 1] === 0x0a ? block : Buffer.concat([block, Buffer.from('\r\n')]));
