import { bodyStructureValue, wireString } from '../mime/imap-notation.js';
import { toCrlf } from '../mime/crlf.js';
import type { FetchRow } from '../services/imap/session.js';
import type { FetchItem } from './fetch-items.js';
import { flagsText } from './flags.js';
import { imapDateTime, type Chunk } from './format.js';
import { sectionBytes } from './sections.js';
import type { ImapSession } from './session.js';
import type { SelectedView } from './view.js';

/** Messages per step: one read of their rows, one socket write, then the event loop runs other work. */
const CHUNK = 500;

export interface FetchOptions {
  byUid: boolean;
  /** RFC 7162 CHANGEDSINCE: only messages whose mod-sequence is above it, with their MODSEQ. */
  changedSince?: number;
}

/**
 * FETCH (RFC 3501 section 6.4.5) of `uids`, answered from rows: flags, sizes, dates and the
 * ENVELOPE and BODYSTRUCTURE ingest stored in IMAP's notation, so an initial sync of
 * thousands of messages builds nothing per message. Body sections are read from the part
 * offsets, with CRLF line ends whatever was stored (src/mime/crlf.ts). Responses go out
 * in chunks, one socket write each, and the event loop turns between chunks, so a large
 * sync never holds up REST, SMTP or other sessions.
 */
export const fetchMessages = async (
  session: ImapSession,
  view: SelectedView,
  uids: readonly number[],
  items: readonly FetchItem[],
  options: FetchOptions,
): Promise<void> => {
  const wire = items.some((item) => item.kind === 'envelope' || (item.kind === 'structure' && item.extensible));
  const marksSeen = !view.readOnly && items.some((item) => item.kind === 'body' && !item.peek);
  const withModseq = options.changedSince !== undefined || items.some((item) => item.kind === 'modseq');
  for (let start = 0; start < uids.length; start += CHUNK) {
    if (start > 0) await new Promise<void>((resolve) => setImmediate(resolve));
    let rows = session.services.imapMail.fetchRows(view.folder, uids.slice(start, start + CHUNK), wire);
    if (options.changedSince !== undefined) rows = rows.filter((row) => row.modseq > (options.changedSince as number));
    const seen = marksSeen ? markSeen(session, view, rows) : new Set<number>();
    const out = new ResponseText();
    for (const row of rows) {
      if (session.state === 'logout') return;
      await respond(session, view, row, items, { ...options, withModseq, flagsChanged: seen.has(row.uid) }, out);
    }
    await session.output.write(out.take());
  }
};

/** A non-PEEK body fetch on a read-write selection sets \Seen (RFC 3501 section 6.4.5) and reports the new FLAGS. */
const markSeen = (session: ImapSession, view: SelectedView, rows: FetchRow[]): Set<number> => {
  const unseen = rows.filter((row) => !row.flags.seen).map((row) => row.uid);
  if (unseen.length === 0) return new Set();
  const result = session.services.imapMail.setFlags(session.requireIdentity(), view.folder, unseen, { mode: 'add', system: new Set(['seen']), keywords: [] });
  const byUid = new Map(result.changed.map((changed) => [changed.uid, changed]));
  for (const row of rows) {
    const changed = byUid.get(row.uid);
    if (!changed) continue;
    row.flags = changed.flags;
    row.modseq = changed.modseq;
    view.ownChange(changed.modseq);
  }
  return new Set(byUid.keys());
};

/** Response bytes of one step: text runs joined as latin1 (one byte per character), literal data as it is. */
class ResponseText {
  private readonly parts: Chunk[] = [];
  private text = '';

  add(text: string): void {
    this.text += text;
  }

  data(bytes: Buffer): void {
    this.text += `{${bytes.length}}\r\n`;
    this.parts.push(Buffer.from(this.text, 'latin1'), bytes);
    this.text = '';
  }

  take(): Chunk[] {
    if (this.text !== '') this.parts.push(Buffer.from(this.text, 'latin1'));
    this.text = '';
    return this.parts.splice(0);
  }
}

interface RespondOptions extends FetchOptions {
  withModseq: boolean;
  flagsChanged: boolean;
}

const respond = async (
  session: ImapSession,
  view: SelectedView,
  row: FetchRow,
  items: readonly FetchItem[],
  options: RespondOptions,
  out: ResponseText,
): Promise<void> => {
  out.add(`* ${view.sequenceOf(row.uid)} FETCH (`);
  const parts: string[] = [];
  if (options.byUid || items.some((item) => item.kind === 'uid')) parts.push(`UID ${row.uid}`);
  if (options.flagsChanged || items.some((item) => item.kind === 'flags')) parts.push(`FLAGS ${flagsText(row.flags, view.recent.has(row.uid))}`);
  let first = parts.length === 0;
  out.add(parts.join(' '));
  for (const item of items) {
    if (item.kind === 'uid' || item.kind === 'flags' || item.kind === 'modseq') continue;
    out.add(first ? '' : ' ');
    first = false;
    await itemValue(session, row, item, out);
  }
  if (options.withModseq) out.add(`${first ? '' : ' '}MODSEQ (${row.modseq})`);
  out.add(')\r\n');
};

const itemValue = async (session: ImapSession, row: FetchRow, item: FetchItem, out: ResponseText): Promise<void> => {
  const mail = session.services.imapMail;
  switch (item.kind) {
    case 'size':
      return out.add(`RFC822.SIZE ${row.size}`);
    case 'internaldate':
      return out.add(`INTERNALDATE "${imapDateTime(row.receivedAt)}"`);
    case 'envelope':
      return out.add(`ENVELOPE ${(await mail.wire(row)).envelope.toString('latin1')}`);
    case 'structure': {
      if (item.extensible) return out.add(`BODYSTRUCTURE ${(await mail.wire(row)).bodyStructure.toString('latin1')}`);
      return out.add(`BODY ${wireString(bodyStructureValue((await mail.structure(row.rowId)).root, false))}`);
    }
    case 'body': {
      const data = partial(toCrlf(await sectionBytes(mail, row, item.section)), item.partial);
      out.add(`${item.label} `);
      return out.data(data);
    }
    default:
      return undefined;
  }
};

const partial = (data: Buffer, range: { start: number; length: number } | null): Buffer =>
  range === null ? data : data.subarray(Math.min(range.start, data.length), Math.min(range.start + range.length, data.length));
