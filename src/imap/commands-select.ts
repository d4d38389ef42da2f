import { folderArg } from './commands-folders.js';
import { flagsResponse, flagsText, permanentFlags } from './flags.js';
import { asAtom, asList, asString, ParseError, type Token } from './parser.js';
import { sequenceOf, uidSetMatcher, uidSetText } from './sequence.js';
import type { CommandSpec, ImapSession } from './session.js';
import { SelectedView } from './view.js';

const AUTHENTICATED = ['authenticated', 'selected'] as const;
const SELECTED = ['selected'] as const;

/** SELECT and EXAMINE parameters: (CONDSTORE) or (QRESYNC (uidvalidity modseq [known-uids])), RFC 7162 sections 3.1.8 and 3.2.5. */
interface SelectParams {
  condstore: boolean;
  qresync: { uidValidity: number; modseq: number; knownUids: string | null } | null;
}

const number = (token: Token | undefined, what: string): number => {
  const text = asAtom(token, what);
  if (!/^\d{1,20}$/.test(text)) throw new ParseError(`expected ${what}`);
  return Number(text);
};

const selectParams = (args: Token[]): SelectParams => {
  const params: SelectParams = { condstore: false, qresync: null };
  if (args.length === 1) return params;
  if (args.length !== 2) throw new ParseError('usage: SELECT <mailbox> [(CONDSTORE) | (QRESYNC (...))]');
  const items = asList(args[1], 'select parameters');
  for (let index = 0; index < items.length; index += 1) {
    const name = asAtom(items[index], 'a select parameter').toUpperCase();
    if (name === 'CONDSTORE') params.condstore = true;
    else if (name === 'QRESYNC') {
      const values = asList(items[(index += 1)], 'QRESYNC parameters');
      if (values.length < 2 || values.length > 4) throw new ParseError('QRESYNC takes (uidvalidity modseq [known-uids [seq-match]])');
      params.qresync = {
        uidValidity: number(values[0], 'a UIDVALIDITY'),
        modseq: number(values[1], 'a mod-sequence'),
        knownUids: values[2] ? asString(values[2], 'known UIDs') : null,
      };
    } else throw new ParseError(`unknown select parameter ${name.slice(0, 30)}`);
  }
  return params;
};

/**
 * SELECT and EXAMINE (RFC 3501 sections 6.3.1 and 6.3.2), with CONDSTORE's HIGHESTMODSEQ and
 * QRESYNC's resynchronization (VANISHED (EARLIER), then the flags changed since).
 */
const select = async (session: ImapSession, args: Token[], readOnly: boolean): Promise<string> => {
  if (args.length < 1) throw new ParseError(readOnly ? 'usage: EXAMINE <mailbox>' : 'usage: SELECT <mailbox>');
  const params = selectParams(args);
  if (params.qresync && !session.qresync) throw new ParseError('QRESYNC must be enabled first (ENABLE QRESYNC)');
  const identity = session.requireIdentity();
  // RFC 7162 section 3.2.11: a selected folder closes first, and says so. A SELECT that fails leaves none selected.
  if (session.view) await session.untagged(['OK [CLOSED] previous folder closed']);
  session.select(null);
  const snapshot = await session.services.imap.open(identity, folderArg(args[0]), readOnly);
  if (params.condstore) session.enabled.add('CONDSTORE');
  const { folder } = snapshot;
  const view = new SelectedView(folder, snapshot.uids, readOnly, new Set(snapshot.recent), folder.highestModseq, folder.highestModseq, snapshot.keywords);
  session.select(view);
  await session.untagged([flagsResponse(snapshot.keywords)]);
  await session.untagged([`OK [PERMANENTFLAGS ${readOnly ? '()' : permanentFlags(snapshot.keywords)}] flags you can change`]);
  await session.untagged([`${view.exists} EXISTS`]);
  await session.untagged([`${view.recent.size} RECENT`]);
  if (snapshot.firstUnseenUid !== null) await session.untagged([`OK [UNSEEN ${sequenceOf(view.uids, snapshot.firstUnseenUid)}] first unseen`]);
  await session.untagged([`OK [UIDVALIDITY ${folder.uidValidity}] UIDs valid`]);
  await session.untagged([`OK [UIDNEXT ${folder.uidNext}] predicted next UID`]);
  if (session.condstore) await session.untagged([`OK [HIGHESTMODSEQ ${folder.highestModseq}] highest mod-sequence`]);
  if (params.qresync && params.qresync.uidValidity === folder.uidValidity) await resync(session, view, params.qresync.modseq, params.qresync.knownUids);
  return `OK [${readOnly ? 'READ-ONLY' : 'READ-WRITE'}] ${readOnly ? 'EXAMINE' : 'SELECT'} completed`;
};

/** RFC 7162 section 3.2.5.2: what the client missed since its mod-sequence. */
const resync = async (session: ImapSession, view: SelectedView, modseq: number, knownUids: string | null): Promise<void> => {
  const known = knownUids === null ? () => true : uidSetMatcher(knownUids);
  const vanished = (await session.services.imap.expungedSince(view.folder, modseq)).filter(known);
  if (vanished.length > 0) await session.untagged([`VANISHED (EARLIER) ${uidSetText(vanished)}`]);
  const lines: string[] = [];
  for (const row of await session.services.imap.flagsChangedSince(view.folder, modseq, view.lastUid)) {
    lines.push(`* ${view.sequenceOf(row.uid)} FETCH (UID ${row.uid} FLAGS ${flagsText(row.flags, view.recent.has(row.uid))} MODSEQ (${row.modseq}))\r\n`);
    if (lines.length >= 256) await session.output.write(lines.splice(0));
  }
  if (lines.length > 0) await session.output.write(lines);
};

/** EXPUNGE and UID EXPUNGE (RFC 4315): \Deleted messages of the view, answered as EXPUNGE or VANISHED. */
export const expunge = async (session: ImapSession, only: readonly number[] | null, silent = false): Promise<void> => {
  const view = session.requireView();
  const deleted = (await session.services.imapMail.deletedUids(view.folder)).filter((uid) => view.has(uid) && (only === null || only.includes(uid)));
  const removed = await session.services.imapMail.expunge(session.requireIdentity(), view.folder, deleted);
  if (silent) {
    view.remove(removed);
    return;
  }
  await sendExpunged(session, removed);
};

/** Tells the client of messages this session removed (EXPUNGE, MOVE): "* n EXPUNGE" highest first, or VANISHED with QRESYNC. */
export const sendExpunged = async (session: ImapSession, removed: readonly number[]): Promise<void> => {
  const view = session.requireView();
  const recentBefore = view.recent.size;
  if (session.qresync) {
    view.remove(removed);
    if (removed.length > 0) await session.untagged([`VANISHED ${uidSetText([...removed].sort((a, b) => a - b))}`]);
  } else {
    const sequences = view.remove(removed);
    for (let start = 0; start < sequences.length; start += 256) {
      await session.output.write(sequences.slice(start, start + 256).map((sequence) => `* ${sequence} EXPUNGE\r\n`));
    }
  }
  // RFC 3501 section 7.3.2: the number of \Recent messages changed with them.
  if (view.recent.size !== recentBefore) await session.untagged([`${view.recent.size} RECENT`]);
};

export const selectCommands: Record<string, CommandSpec> = {
  SELECT: { states: AUTHENTICATED, run: (session, args) => select(session, args, false) },
  EXAMINE: { states: AUTHENTICATED, run: (session, args) => select(session, args, true) },
  CHECK: { states: SELECTED, run: () => 'OK CHECK completed' },
  /** RFC 3501 section 6.4.2: \Deleted messages are removed silently, and the folder is closed. */
  CLOSE: {
    states: SELECTED,
    run: async (session) => {
      if (!session.requireView().readOnly) await expunge(session, null, true);
      session.select(null);
      return 'OK CLOSE completed';
    },
  },
  UNSELECT: { states: SELECTED, run: (session) => (session.select(null), 'OK UNSELECT completed') },
  EXPUNGE: {
    states: SELECTED,
    run: async (session, args) => {
      if (args.length > 0) throw new ParseError('usage: EXPUNGE');
      if (session.requireView().readOnly) return 'NO [READ-ONLY] the folder was opened with EXAMINE';
      await expunge(session, null);
      return 'OK EXPUNGE completed';
    },
  },
};
