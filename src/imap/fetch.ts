import type { MessageMeta } from '../services/imap/session.js';
import type { MessageStructure } from '../core/stored-message.js';
import { envelopeOf } from '../mime/envelope.js';
import { encapsulatedMessage, findPart, headerBlocks, parseHeaderFields, parseMimeTree, type MimePart } from '../mime/mime-tree.js';
import { structureOf } from '../mime/structure.js';
import { bodyStructureValue, envelopeValue } from './envelope.js';
import type { FetchItem, Section } from './fetch-items.js';
import { atom, bytes, serializeAll, str, type ImapValue } from './format.js';
import { imapDateTime } from './format.js';
import type { ImapSession, Selection } from './session.js';

/** Bytes of one message, loaded at most once per FETCH of it. */
class MessageSource {
  private rawBytes: Buffer | null = null;
  private headerBytes: Buffer | null = null;
  private tree: MimePart | null = null;

  constructor(private readonly session: ImapSession, private readonly selection: Selection, readonly uid: number) {}

  raw(): Buffer {
    this.rawBytes ??= this.session.services.imap.raw(this.selection.folder, this.uid);
    return this.rawBytes;
  }

  /** The top-level header without reading a large body. */
  header(): Buffer {
    if (this.rawBytes) return this.rawBytes.subarray(0, this.mime().bodyStart);
    this.headerBytes ??= this.session.services.imap.header(this.selection.folder, this.uid);
    return this.headerBytes;
  }

  mime(): MimePart {
    this.tree ??= parseMimeTree(this.raw());
    return this.tree;
  }

  structure(): MessageStructure {
    return structureOf(this.raw(), this.mime());
  }
}

export const flagsValue = (meta: Pick<MessageMeta, 'seen' | 'flagged'>): ImapValue =>
  [...(meta.seen ? [atom('\\Seen')] : []), ...(meta.flagged ? [atom('\\Flagged')] : [])];

/**
 * One "* n FETCH (...)" response (RFC 3501 section 7.4.2). A non-PEEK body fetch on a
 * read-write selection sets \Seen and reports the new FLAGS.
 */
export const fetchOne = async (session: ImapSession, selection: Selection, meta: MessageMeta, sequence: number, items: readonly FetchItem[], byUid: boolean): Promise<void> => {
  const source = new MessageSource(session, selection, meta.uid);
  const marksSeen = !selection.readOnly && !meta.seen && items.some((item) => item.kind === 'body' && !item.peek);
  let current = meta;
  if (marksSeen) current = session.services.imap.setFlags(selection.folder, [meta.uid], 'add', { seen: true })[0] ?? meta;
  const values: ImapValue[] = [];
  const wantsUid = byUid || items.some((item) => item.kind === 'uid');
  if (wantsUid) values.push(atom('UID'), meta.uid);
  const wantsFlags = marksSeen || items.some((item) => item.kind === 'flags');
  if (wantsFlags) values.push(atom('FLAGS'), flagsValue(current));
  for (const item of items) {
    if (item.kind === 'uid' || item.kind === 'flags') continue;
    values.push(...itemValue(item, current, source));
  }
  await session.untagged([`${sequence} FETCH (`, ...serializeAll(values), ')']);
};

const itemValue = (item: FetchItem, meta: MessageMeta, source: MessageSource): ImapValue[] => {
  switch (item.kind) {
    case 'size': return [atom('RFC822.SIZE'), meta.size];
    case 'internaldate': return [atom('INTERNALDATE'), str(imapDateTime(meta.receivedAt))];
    case 'envelope': return [atom('ENVELOPE'), envelopeValue(envelopeOf(parseHeaderFields(source.header())))];
    case 'structure': return [atom(item.extensible ? 'BODYSTRUCTURE' : 'BODY'), bodyStructureValue(source.structure().root, item.extensible)];
    case 'body': return [atom(item.label), bytes(partial(sectionBytes(item.section, source), item.partial))];
    default: return [];
  }
};

const partial = (data: Buffer, range: { start: number; length: number } | null): Buffer =>
  range === null ? data : data.subarray(Math.min(range.start, data.length), Math.min(range.start + range.length, data.length));

/** The exact bytes a section names; a part that does not exist is empty. */
const sectionBytes = (section: Section, source: MessageSource): Buffer => {
  if (section.path.length === 0) {
    if (section.spec === 'ALL') return source.raw();
    if (section.spec === 'HEADER') return source.header();
    if (section.spec === 'HEADER.FIELDS' || section.spec === 'HEADER.FIELDS.NOT') return filterHeader(source.header(), section);
    const root = source.mime();
    return source.raw().subarray(root.bodyStart, root.end);
  }
  const raw = source.raw();
  const part = findPart(source.mime(), section.path);
  if (!part) return Buffer.alloc(0);
  if (section.spec === 'ALL') return raw.subarray(part.bodyStart, part.end);
  if (section.spec === 'MIME') return raw.subarray(part.start, part.bodyStart);
  // HEADER and TEXT of a part name the message a message/rfc822 part carries.
  const message = encapsulatedMessage(part);
  if (!message) return Buffer.alloc(0);
  if (section.spec === 'TEXT') return raw.subarray(message.bodyStart, message.end);
  const header = raw.subarray(message.start, message.bodyStart);
  return section.spec === 'HEADER' ? header : filterHeader(header, section);
};

/** HEADER.FIELDS (and .NOT): the matching fields as sent, then the blank line. */
const filterHeader = (header: Buffer, section: Section): Buffer => {
  const wanted = new Set(section.fields);
  const keep = section.spec === 'HEADER.FIELDS';
  const blocks = headerBlocks(header).filter((block) => wanted.has(block.name) === keep);
  return Buffer.concat([...blocks.map((block) => withLineEnd(block.bytes)), Buffer.from('\r\n')]);
};

const withLineEnd = (block: Buffer): Buffer => (block[block.length - 1] === 0x0a ? block : Buffer.concat([block, Buffer.from('\r\n')]));
