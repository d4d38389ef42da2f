import { MESSAGE_STEPS, pacedSteps } from '../core/paced-steps.js';
import type { FlagChange } from '../services/mail/message-ops.js';
import { moveOrCopy } from './commands-copy.js';
import { expunge } from './commands-select.js';
import { fetchMessages } from './fetch.js';
import { parseFetchItems } from './fetch-items.js';
import { flagChange, flagsText } from './flags.js';
import { asAtom, asList, asString, ParseError, type Token } from './parser.js';
import { parseSearch } from './search-parse.js';
import { uidSetText } from './sequence.js';
import type { CommandSpec, ImapSession } from './session.js';

const SELECTED = ['selected'] as const;

const modifierNumber = (token: Token | undefined, what: string): number => {
  const text = asAtom(token, what);
  if (!/^\d{1,20}$/.test(text)) throw new ParseError(`expected ${what}`);
  return Number(text);
};

/** FETCH modifiers (RFC 7162 sections 3.1.4.1 and 3.2.6): (CHANGEDSINCE n [VANISHED]). */
const fetchModifiers = (token: Token | undefined, byUid: boolean, qresync: boolean): { changedSince?: number; vanished: boolean } => {
  if (!token) return { vanished: false };
  const items = asList(token, 'fetch modifiers');
  const out: { changedSince?: number; vanished: boolean } = { vanished: false };
  for (let index = 0; index < items.length; index += 1) {
    const name = asAtom(items[index], 'a fetch modifier').toUpperCase();
    if (name === 'CHANGEDSINCE') out.changedSince = modifierNumber(items[(index += 1)], 'a mod-sequence');
    else if (name === 'VANISHED' && byUid && qresync) out.vanished = true;
    else throw new ParseError(`unknown fetch modifier ${name.slice(0, 30)}`);
  }
  if (out.vanished && out.changedSince === undefined) throw new ParseError('VANISHED needs CHANGEDSINCE');
  return out;
};

const fetch = async (session: ImapSession, args: Token[], byUid: boolean): Promise<string> => {
  if (args.length < 2 || args.length > 3) throw new ParseError('usage: FETCH <sequence set> <attributes> [(modifiers)]');
  const view = session.requireView();
  const set = asAtom(args[0], 'a sequence set');
  const uids = view.resolve(set, byUid);
  const items = parseFetchItems(args[1]);
  const modifiers = fetchModifiers(args[2], byUid, session.qresync);
  if (modifiers.changedSince !== undefined || items.some((item) => item.kind === 'modseq')) await session.enableCondstore();
  if (modifiers.vanished && modifiers.changedSince !== undefined) {
    // RFC 7162 section 3.2.6: the UIDs of the set expunged since, before the FETCH responses.
    const gone = (await session.services.imap.expungedSince(view.folder, modifiers.changedSince)).filter((uid) => inUidSet(set, uid, view.lastUid));
    if (gone.length > 0) await session.untagged([`VANISHED (EARLIER) ${uidSetText(gone)}`]);
  }
  await fetchMessages(session, view, uids, items, { byUid, changedSince: modifiers.changedSince });
  return 'OK FETCH completed';
};

/** Whether a UID is named by a UID set (`*` is the highest UID of the view). */
const inUidSet = (set: string, uid: number, lastUid: number): boolean =>
  set.split(',').some((item) => {
    const [a, b = a] = item.split(':').map((bound) => (bound === '*' ? lastUid : Number(bound)));
    return uid >= Math.min(a, b) && uid <= Math.max(a, b);
  });

const STORE_ITEM = /^([+-]?)FLAGS(\.SILENT)?$/i;

/** STORE (RFC 3501 section 6.4.6), with UNCHANGEDSINCE (RFC 7162 section 3.1.3). */
const store = async (session: ImapSession, args: Token[], byUid: boolean): Promise<string> => {
  const view = session.requireView();
  let rest = args.slice(1);
  let unchangedSince: number | undefined;
  if (rest[0]?.type === 'list') {
    const modifier = asList(rest[0], 'store modifiers');
    if (modifier.length !== 2 || asAtom(modifier[0], 'UNCHANGEDSINCE').toUpperCase() !== 'UNCHANGEDSINCE')
      throw new ParseError('the only STORE modifier is (UNCHANGEDSINCE n)');
    unchangedSince = modifierNumber(modifier[1], 'a mod-sequence');
    rest = rest.slice(1);
    await session.enableCondstore();
  }
  if (rest.length < 2) throw new ParseError('usage: STORE <sequence set> [(UNCHANGEDSINCE n)] [+|-]FLAGS[.SILENT] (<flags>)');
  const uids = view.resolve(asAtom(args[0], 'a sequence set'), byUid);
  const item = STORE_ITEM.exec(asAtom(rest[0], 'FLAGS, +FLAGS or -FLAGS'));
  if (!item) throw new ParseError('expected FLAGS, +FLAGS or -FLAGS');
  const change: FlagChange = flagChange(
    item[1] === '+' ? 'add' : item[1] === '-' ? 'remove' : 'replace',
    rest[1].type === 'list' ? rest[1].items : rest.slice(1),
  );
  if (view.readOnly) return 'NO [READ-ONLY] the folder was opened with EXAMINE';
  const silent = item[2] !== undefined;
  const modified: number[] = [];
  // In steps, each its own transaction: STORE 1:* of a large folder would otherwise hold
  // every other session for the whole of it. RFC 3501 does not make a STORE atomic, and
  // RFC 7162 gives each changed message a mod-sequence of its own.
  await pacedSteps(uids, MESSAGE_STEPS, async (step) => {
    const result = await session.services.imapMail.setFlags(session.requireIdentity(), view.folder, step, change, unchangedSince);
    for (const changed of result.changed) view.ownChange(changed.modseq);
    modified.push(...result.modified);
    const [skipped, changed] = [new Set(result.modified), new Set(result.changed.map((row) => row.uid))];
    const lines: string[] = [];
    for (const row of result.current) {
      if (skipped.has(row.uid)) continue;
      // With CONDSTORE on, a .SILENT STORE still tells the client each new MODSEQ (RFC 7162 section 3.1.3).
      if (silent && !(session.condstore && changed.has(row.uid))) continue;
      const parts = [
        ...(byUid ? [`UID ${row.uid}`] : []),
        ...(silent ? [] : [`FLAGS ${flagsText(row.flags, view.recent.has(row.uid))}`]),
        ...(session.condstore ? [`MODSEQ (${row.modseq})`] : []),
      ];
      lines.push(`* ${view.sequenceOf(row.uid)} FETCH (${parts.join(' ')})\r\n`);
    }
    if (lines.length > 0) await session.output.write(lines);
  });
  if (modified.length > 0) {
    const numbers = byUid ? modified : modified.map((uid) => view.sequenceOf(uid));
    return `OK [MODIFIED ${uidSetText(numbers.sort((a, b) => a - b))}] some messages changed since UNCHANGEDSINCE`;
  }
  return 'OK STORE completed';
};

/** SEARCH (RFC 3501 section 6.4.4), with MODSEQ (RFC 7162 section 3.1.5). */
const search = async (session: ImapSession, args: Token[], byUid: boolean): Promise<string> => {
  const view = session.requireView();
  let keys = args;
  if (keys[0]?.type === 'atom' && keys[0].value.toUpperCase() === 'CHARSET') {
    const charset = asString(keys[1], 'a charset').toUpperCase();
    if (charset !== 'UTF-8' && charset !== 'US-ASCII') return 'NO [BADCHARSET (UTF-8 US-ASCII)] unsupported charset';
    keys = keys.slice(2);
  }
  const { key, modseq } = parseSearch(keys, view.uids);
  if (modseq) await session.enableCondstore();
  const found = await session.services.imapMail.search(view.folder, view.uids, key, view.recent);
  const numbers = byUid ? found : found.map((uid) => view.sequenceOf(uid));
  // RFC 7162 section 3.1.5: with MODSEQ in the key, the highest mod-sequence of the messages found.
  const highest =
    modseq && found.length > 0
      ? ` (MODSEQ ${(await session.services.imapMail.fetchRows(view.folder, found, false)).reduce((max, row) => Math.max(max, row.modseq), 0)})`
      : '';
  await session.untagged([['SEARCH', ...numbers].join(' ') + highest]);
  return 'OK SEARCH completed';
};

const UID_COMMANDS: Record<string, (session: ImapSession, args: Token[]) => Promise<string>> = {
  FETCH: (session, args) => fetch(session, args, true),
  STORE: (session, args) => store(session, args, true),
  SEARCH: (session, args) => search(session, args, true),
  COPY: (session, args) => moveOrCopy(session, args, true, false),
  MOVE: (session, args) => moveOrCopy(session, args, true, true),
  /** RFC 4315 section 2.1: only the \Deleted messages of the set. */
  EXPUNGE: async (session, args) => {
    if (args.length !== 1) throw new ParseError('usage: UID EXPUNGE <UID set>');
    const view = session.requireView();
    if (view.readOnly) return 'NO [READ-ONLY] the folder was opened with EXAMINE';
    await expunge(session, view.resolve(asAtom(args[0], 'a UID set'), true));
    return 'OK UID EXPUNGE completed';
  },
};

const uid = (session: ImapSession, args: Token[]): Promise<string> => {
  const name = asAtom(args[0], 'FETCH, STORE, SEARCH, COPY, MOVE or EXPUNGE').toUpperCase();
  const run = UID_COMMANDS[name];
  if (!run) throw new ParseError(`unknown UID command ${name.slice(0, 20)}`);
  return run(session, args.slice(1));
};

export const messageCommands: Record<string, CommandSpec> = {
  FETCH: { states: SELECTED, run: (session, args) => fetch(session, args, false), holdExpunges: true },
  STORE: { states: SELECTED, run: (session, args) => store(session, args, false), holdExpunges: true },
  SEARCH: { states: SELECTED, run: (session, args) => search(session, args, false), holdExpunges: true },
  COPY: { states: SELECTED, run: (session, args) => moveOrCopy(session, args, false, false) },
  MOVE: { states: SELECTED, run: (session, args) => moveOrCopy(session, args, false, true) },
  UID: { states: SELECTED, run: uid },
};
