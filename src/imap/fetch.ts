import { MESSAGE_STEPS, pacedSteps } from '../core/paced-steps.js';
import { bodyStructureValue, wireString } from '../mime/imap-notation.js';
import { toCrlf } from '../mime/crlf.js';
import type { FetchRow } from '../services/imap/session.js';
import type { FetchItem, Section } from './fetch-items.js';
import { flagsText } from './flags.js';
import { imapDateTime, type Chunk } from './format.js';
import { sectionBytes } from './sections.js';
import type { ImapSession } from './session.js';
import type { SelectedView } from './view.js';

/**
 * Response bytes after which a step hands what it has built to the socket before going on.
 * The client, on another core, then reads while the rest is built; one write per step
 * would make it wait for a whole step of bodies (up to 32 MB) first.
 */
const FLUSH_BYTES = 256 * 1024;

export interface FetchOptions {
  byUid: boolean;
  /** RFC 7162 CHANGEDSINCE: only messages whose mod-sequence is above it, with their MODSEQ. */
  changedSince?: number;
}

/**
 * FETCH (RFC 3501 section 6.4.5) of `uids`, answered from rows: flags, sizes, dates and the
 * ENVELOPE and BODYSTRUCTURE ingest stored in IMAP's notation, so an initial sync of
 * thousands of messages builds nothing per message. Body sections are read from the part
 * offsets, with CRLF line ends whatever was stored (src/mime/crlf.ts). Messages are answered
 * in steps of a few milliseconds each, and the event loop turns between steps, so a large
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
  const withRaw = items.some((item) => item.kind === 'body' && isWhole(item.section));
  const plan: Plan = {
    ...options,
    withUid: options.byUid || items.some((item) => item.kind === 'uid'),
    withFlags: items.some((item) => item.kind === 'flags'),
    withModseq: options.changedSince !== undefined || items.some((item) => item.kind === 'modseq'),
    others: items.filter((item) => item.kind !== 'uid' && item.kind !== 'flags' && item.kind !== 'modseq'),
  };
  await pacedSteps(uids, MESSAGE_STEPS, async (step) => {
    let rows = await session.services.imapMail.fetchRows(view.folder, step, wire, withRaw);
    if (options.changedSince !== undefined) rows = rows.filter((row) => row.modseq > (options.changedSince as number));
    const seen = marksSeen ? await markSeen(session, view, rows) : new Set<number>();
    const out = new ResponseText();
    for (const row of rows) {
      if (session.state === 'logout') return false;
      // Items answered from the row go out without a turn of the event loop; only a body
      // section or a message stored before its structure waits for a read or a parse.
      const pending = respond(session, view, row, plan, seen.has(row.uid), out);
      if (pending) await pending;
      // Not awaited: the step's rows are in memory already, so writing on does not grow what is
      // held; the write at the step's end waits for the socket to drain, and meets any failure
      // this one would (a closed socket), so this one's is not reported twice.
      if (out.size >= FLUSH_BYTES) session.output.write(out.take()).catch(() => undefined);
    }
    await session.output.write(out.take());
  });
};

/** A non-PEEK body fetch on a read-write selection sets \Seen (RFC 3501 section 6.4.5) and reports the new FLAGS. */
const markSeen = async (session: ImapSession, view: SelectedView, rows: FetchRow[]): Promise<Set<number>> => {
  const unseen = rows.filter((row) => !row.flags.seen).map((row) => row.uid);
  if (unseen.length === 0) return new Set();
  const result = await session.services.imapMail.setFlags(session.requireIdentity(), view.folder, unseen, {
    mode: 'add',
    system: new Set(['seen']),
    keywords: [],
  });
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

/**
 * Stored bytes at least this long go to the socket as they are (one more buffer of a gathered
 * write); shorter ones are joined with the text around them. Copying a body into one joined
 * buffer costs more than the memory copy: the new buffer's pages are faulted in too.
 */
const PASS_THROUGH_BYTES = 2048;

/**
 * Response bytes of one step: text runs as latin1 (one byte per character), joined with short
 * stored bytes into runs; long stored bytes and literal data are kept as they are.
 */
class ResponseText {
  private readonly parts: Buffer[] = [];
  /** Short pieces not yet joined into a run. */
  private readonly run: Buffer[] = [];
  private text = '';
  /** Bytes in `parts` and `run`, the text not yet counted. */
  private counted = 0;

  get size(): number {
    return this.counted + this.text.length;
  }

  add(text: string): void {
    this.text += text;
  }

  bytes(bytes: Buffer): void {
    this.textToRun();
    this.counted += bytes.length;
    if (bytes.length < PASS_THROUGH_BYTES) {
      this.run.push(bytes);
      return;
    }
    this.joinRun();
    this.parts.push(bytes);
  }

  data(bytes: Buffer): void {
    this.add(`{${bytes.length}}\r\n`);
    this.bytes(bytes);
  }

  take(): Chunk[] {
    this.textToRun();
    this.joinRun();
    this.counted = 0;
    return this.parts.splice(0);
  }

  private textToRun(): void {
    if (this.text === '') return;
    this.run.push(Buffer.from(this.text, 'latin1'));
    this.counted += this.text.length;
    this.text = '';
  }

  private joinRun(): void {
    if (this.run.length === 0) return;
    this.parts.push(this.run.length === 1 ? this.run[0] : Buffer.concat(this.run));
    this.run.length = 0;
  }
}

/** What every message of one FETCH answers, worked out once. */
interface Plan extends FetchOptions {
  withUid: boolean;
  withFlags: boolean;
  withModseq: boolean;
  /** The items besides UID, FLAGS and MODSEQ, in the order asked. */
  others: readonly FetchItem[];
}

/** One message's FETCH response; a promise only when an item must wait (see fetchMessages). */
const respond = (session: ImapSession, view: SelectedView, row: FetchRow, plan: Plan, flagsChanged: boolean, out: ResponseText): Promise<void> | undefined => {
  out.add(`* ${view.sequenceOf(row.uid)} FETCH (`);
  let first = true;
  if (plan.withUid) {
    out.add(`UID ${row.uid}`);
    first = false;
  }
  if (plan.withFlags || flagsChanged) {
    out.add(`${first ? '' : ' '}FLAGS ${flagsText(row.flags, view.recent.has(row.uid))}`);
    first = false;
  }
  for (let index = 0; index < plan.others.length; index += 1) {
    if (!first) out.add(' ');
    first = false;
    const pending = itemValue(session, row, plan.others[index], out);
    if (pending) return pending.then(() => rest(session, row, plan, index + 1, out));
  }
  close(row, plan, first, out);
  return undefined;
};

/** The items from `from` on, after one that had to wait. */
const rest = async (session: ImapSession, row: FetchRow, plan: Plan, from: number, out: ResponseText): Promise<void> => {
  for (let index = from; index < plan.others.length; index += 1) {
    out.add(' ');
    await itemValue(session, row, plan.others[index], out);
  }
  close(row, plan, false, out);
};

const close = (row: FetchRow, plan: Plan, first: boolean, out: ResponseText): void => {
  if (plan.withModseq) out.add(`${first ? '' : ' '}MODSEQ (${row.modseq})`);
  out.add(')\r\n');
};

/** One item's value, from the row when it can be; otherwise a promise. */
const itemValue = (session: ImapSession, row: FetchRow, item: FetchItem, out: ResponseText): Promise<void> | undefined => {
  const mail = session.services.imapMail;
  if (item.kind === 'size') out.add(`RFC822.SIZE ${row.size}`);
  else if (item.kind === 'internaldate') out.add(`INTERNALDATE "${imapDateTime(row.receivedAt)}"`);
  else if (item.kind === 'envelope') {
    out.add('ENVELOPE ');
    if (!row.envelopeWire) return mail.wire(row).then((wire) => out.bytes(wire.envelope));
    out.bytes(row.envelopeWire);
  } else if (item.kind === 'structure' && item.extensible) {
    out.add('BODYSTRUCTURE ');
    if (!row.structureWire) return mail.wire(row).then((wire) => out.bytes(wire.bodyStructure));
    out.bytes(row.structureWire);
  } else if (item.kind === 'structure') {
    return mail.structure(row.rowId).then((structure) => out.add(`BODY ${wireString(bodyStructureValue(structure.root, false))}`));
  } else if (item.kind === 'body') {
    if (row.raw && isWhole(item.section)) {
      out.add(`${item.label} `);
      out.data(partial(wholeOnTheWire(row, item.section, row.raw) ? row.raw : toCrlf(row.raw), item.partial));
      return undefined;
    }
    return sectionBytes(mail, row, item.section).then((bytes) => {
      out.add(`${item.label} `);
      out.data(partial(wholeOnTheWire(row, item.section, bytes) ? bytes : toCrlf(bytes), item.partial));
    });
  }
  return undefined;
};

/**
 * Whether `bytes` is the whole message with CRLF line ends already: RFC822.SIZE is the size
 * on the wire (src/mime/crlf.ts), so a stored message of that very length has no bare CR or
 * LF to convert, and the scan for them is skipped.
 */
const wholeOnTheWire = (row: FetchRow, section: Section, bytes: Buffer): boolean => isWhole(section) && bytes.length === row.size;

/** BODY[] (and RFC822): the whole message. */
const isWhole = (section: Section): boolean => section.path.length === 0 && section.spec === 'ALL';

const partial = (data: Buffer, range: { start: number; length: number } | null): Buffer =>
  range === null ? data : data.subarray(Math.min(range.start, data.length), Math.min(range.start + range.length, data.length));
