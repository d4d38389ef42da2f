import type { FlagMode, FlagSet } from '../services/imap/session.js';
import { fetchOne, flagsValue } from './fetch.js';
import { parseFetchItems } from './fetch-items.js';
import { atom, serializeAll, type ImapValue } from './format.js';
import { asAtom, asString, ParseError, type Token } from './parser.js';
import { parseSearch } from './search-parse.js';
import { parseSequenceSet, resolveSet, sequenceOf } from './sequence.js';
import type { CommandSpec, ImapSession } from './session.js';

const SELECTED = ['selected'] as const;

const fetch = async (session: ImapSession, args: Token[], byUid: boolean): Promise<string> => {
  if (args.length !== 2) throw new ParseError('usage: FETCH <sequence set> <attributes>');
  const selection = session.requireSelection();
  const uids = resolveSet(parseSequenceSet(asAtom(args[0], 'a sequence set')), selection.uids, byUid);
  const items = parseFetchItems(args[1]);
  // One message at a time, so a large message is in memory once and alone.
  for (const meta of session.services.imap.meta(selection.folder, uids)) {
    await fetchOne(session, selection, meta, sequenceOf(selection.uids, meta.uid), items, byUid);
  }
  return 'OK FETCH completed';
};

/** Only \Seen and \Flagged are kept; other flags are not in PERMANENTFLAGS and are ignored (RFC 3501 7.1). */
const parseFlags = (token: Token | undefined, rest: Token[]): FlagSet => {
  const tokens = token?.type === 'list' ? token.items : token ? [token, ...rest] : [];
  const flags: FlagSet = {};
  for (const item of tokens) {
    const name = asAtom(item, 'a flag').toLowerCase();
    if (name === '\\seen') flags.seen = true;
    if (name === '\\flagged') flags.flagged = true;
  }
  return flags;
};

const STORE_ITEM = /^([+-]?)FLAGS(\.SILENT)?$/i;

const store = async (session: ImapSession, args: Token[], byUid: boolean): Promise<string> => {
  if (args.length < 3) throw new ParseError('usage: STORE <sequence set> [+|-]FLAGS[.SILENT] (<flags>)');
  const selection = session.requireSelection();
  const uids = resolveSet(parseSequenceSet(asAtom(args[0], 'a sequence set')), selection.uids, byUid);
  const item = STORE_ITEM.exec(asAtom(args[1], 'FLAGS, +FLAGS or -FLAGS'));
  if (!item) throw new ParseError('expected FLAGS, +FLAGS or -FLAGS');
  const flags = parseFlags(args[2], args.slice(3));
  if (selection.readOnly) return 'NO [READ-ONLY] the folder was opened with EXAMINE';
  const mode: FlagMode = item[1] === '+' ? 'add' : item[1] === '-' ? 'remove' : 'replace';
  session.services.imap.setFlags(selection.folder, uids, mode, flags);
  if (!item[2]) {
    for (const meta of session.services.imap.meta(selection.folder, uids)) {
      const values: ImapValue[] = [...(byUid ? [atom('UID'), meta.uid] : []), atom('FLAGS'), flagsValue(meta)];
      await session.untagged([`${sequenceOf(selection.uids, meta.uid)} FETCH (`, ...serializeAll(values), ')']);
    }
  }
  return 'OK STORE completed';
};

const search = async (session: ImapSession, args: Token[], byUid: boolean): Promise<string> => {
  const selection = session.requireSelection();
  let keys = args;
  if (keys[0]?.type === 'atom' && keys[0].value.toUpperCase() === 'CHARSET') {
    const charset = asString(keys[1], 'a charset').toUpperCase();
    if (charset !== 'UTF-8' && charset !== 'US-ASCII') return 'NO [BADCHARSET (UTF-8 US-ASCII)] unsupported charset';
    keys = keys.slice(2);
  }
  const key = parseSearch(keys, selection.uids);
  const found = await session.services.imap.search(selection.folder, selection.uids, key);
  const numbers = byUid ? found : found.map((uid) => sequenceOf(selection.uids, uid));
  await session.untagged([['SEARCH', ...numbers].join(' ')]);
  return 'OK SEARCH completed';
};

const UID_COMMANDS: Record<string, (session: ImapSession, args: Token[], byUid: boolean) => Promise<string>> = {
  FETCH: fetch, STORE: store, SEARCH: search,
};

const uid = (session: ImapSession, args: Token[]): Promise<string> | string => {
  const name = asAtom(args[0], 'FETCH, STORE or SEARCH').toUpperCase();
  if (name === 'COPY' || name === 'MOVE' || name === 'EXPUNGE') return `NO [CANNOT] UID ${name} is not supported`;
  const run = UID_COMMANDS[name];
  if (!run) throw new ParseError(`unknown UID command ${name.slice(0, 20)}`);
  return run(session, args.slice(1), true);
};

export const messageCommands: Record<string, CommandSpec> = {
  FETCH: { states: SELECTED, run: (session, args) => fetch(session, args, false) },
  STORE: { states: SELECTED, run: (session, args) => store(session, args, false) },
  SEARCH: { states: SELECTED, run: (session, args) => search(session, args, false) },
  UID: { states: SELECTED, run: uid },
};
