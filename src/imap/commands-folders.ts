import type { FolderStatus, ImapIdentity } from '../services/imap/session.js';
import { serializeAll, str, atom, type ImapValue } from './format.js';
import { specialUseOf } from '../services/mail/folder-names.js';
import { listFolders, parseList, type ListRequest } from './list.js';
import { decodeMailboxName, encodeMailboxName } from './mutf7.js';
import { asAtom, asList, asString, expectArgs, ParseError, type Token } from './parser.js';
import type { CommandSpec, ImapSession } from './session.js';

const AUTHENTICATED = ['authenticated', 'selected'] as const;
const DELIMITER = '"/"';

/** A folder name argument: modified UTF-7 on the wire (RFC 3501 section 5.1.3), Unicode here. */
export const folderArg = (token: Token | undefined): string => decodeMailboxName(asString(token, 'a folder name'));

/** A folder name in a response. */
export const folderValue = (name: string): ImapValue => str(encodeMailboxName(name));

const STATUS_ITEMS = new Set(['MESSAGES', 'RECENT', 'UIDNEXT', 'UIDVALIDITY', 'UNSEEN', 'HIGHESTMODSEQ']);

const statusItems = (items: readonly string[]): string[] => {
  const unknown = items.find((item) => !STATUS_ITEMS.has(item));
  if (unknown) throw new ParseError(`unknown STATUS item ${unknown.slice(0, 30)}`);
  return [...items];
};

/** "* STATUS name (items)" (RFC 3501 section 7.2.4; HIGHESTMODSEQ from RFC 7162). */
const statusLine = (status: FolderStatus, items: readonly string[]): ImapValue[] => {
  const values: Record<string, number> = {
    MESSAGES: status.messages,
    RECENT: status.recent,
    UIDNEXT: status.uidNext,
    UIDVALIDITY: status.uidValidity,
    UNSEEN: status.unseen,
    HIGHESTMODSEQ: status.highestModseq,
  };
  return [atom('STATUS'), folderValue(status.name), items.flatMap((item) => [atom(item), values[item]])];
};

const list = async (session: ImapSession, args: Token[]): Promise<string> => {
  const identity = session.requireIdentity();
  const request = parseList(args);
  const status = request.status ? statusItems(request.status) : null;
  if (request.patterns.length === 1 && request.patterns[0] === '' && !request.selectSubscribed) {
    // RFC 3501 section 6.3.8: an empty pattern asks for the delimiter and the root.
    await session.untagged([`LIST (\\Noselect) ${DELIMITER} ""`]);
    return 'OK LIST completed';
  }
  if (status) await session.enableCondstoreIf(status.includes('HIGHESTMODSEQ'));
  for (const folder of await listed(session, identity, request)) {
    const extra = folder.childInfo ? ' ("CHILDINFO" ("SUBSCRIBED"))' : '';
    await session.untagged([`LIST (${folder.attributes.join(' ')}) ${DELIMITER} `, ...serializeAll([folderValue(folder.name)]), extra]);
    if (status && folder.exists) await session.untagged(serializeAll(statusLine(await session.services.imap.status(identity, folder.name, status), status)));
  }
  return 'OK LIST completed';
};

const listed = async (session: ImapSession, identity: ImapIdentity, request: ListRequest) => {
  const existing = (await session.services.imap.folders(identity)).map((folder) => folder.name);
  const subscribed = new Set(await session.services.imap.subscriptions(identity));
  return listFolders(request, existing, subscribed);
};

/** LSUB (RFC 3501 section 6.3.9): the subscribed names that match; \Noselect for one without its folder. */
const lsub = async (session: ImapSession, args: Token[]): Promise<string> => {
  expectArgs(args, 2, 'LSUB <reference> <mailbox pattern>');
  const identity = session.requireIdentity();
  const request: ListRequest = { ...parseList(args), selectSubscribed: true };
  for (const folder of await listed(session, identity, request)) {
    // Dovecot's LSUB: the special-use attribute only, \Noselect for a name without its folder.
    const specialUse = specialUseOf(folder.name);
    const attributes = !folder.exists ? ['\\Noselect'] : specialUse ? [specialUse] : [];
    await session.untagged([`LSUB (${attributes.join(' ')}) ${DELIMITER} `, ...serializeAll([folderValue(folder.name)])]);
  }
  return 'OK LSUB completed';
};

const status = async (session: ImapSession, args: Token[]): Promise<string> => {
  expectArgs(args, 2, 'STATUS <mailbox> (<items>)');
  const identity = session.requireIdentity();
  const name = folderArg(args[0]);
  const items = statusItems(asList(args[1], 'a list of status items').map((item) => asAtom(item, 'a status item').toUpperCase()));
  await session.enableCondstoreIf(items.includes('HIGHESTMODSEQ'));
  const found = await session.services.imap.status(identity, name, items);
  // Of the selected folder, \Recent is what this session holds (its view took them).
  const view = session.view;
  const recent = view && view.folder.id === (await session.services.imap.folder(identity, name)).id ? view.recent.size : found.recent;
  await session.untagged(serializeAll(statusLine({ ...found, recent }, items)));
  return 'OK STATUS completed';
};

const folderCommand = (
  usage: string,
  count: number,
  act: (session: ImapSession, identity: ImapIdentity, names: string[]) => Promise<void>,
  done: string,
): CommandSpec => ({
  states: AUTHENTICATED,
  run: async (session, args) => {
    expectArgs(args, count, usage);
    await act(session, session.requireIdentity(), args.map(folderArg));
    return `OK ${done}`;
  },
});

export const folderCommands: Record<string, CommandSpec> = {
  LIST: { states: AUTHENTICATED, run: list },
  LSUB: { states: AUTHENTICATED, run: lsub },
  STATUS: { states: AUTHENTICATED, run: status },
  CREATE: {
    states: AUTHENTICATED,
    run: async (session, args) => {
      // RFC 3501 section 6.3.3: a trailing delimiter only says the name will hold others.
      if (args.length !== 1) throw new ParseError('usage: CREATE <mailbox>');
      await session.services.imap.createFolder(session.requireIdentity(), folderArg(args[0]).replace(/\/+$/, ''));
      return 'OK CREATE completed';
    },
  },
  DELETE: folderCommand('DELETE <mailbox>', 1, (session, identity, [name]) => session.services.imap.deleteFolder(identity, name), 'DELETE completed'),
  RENAME: folderCommand(
    'RENAME <mailbox> <new name>',
    2,
    (session, identity, [from, to]) => session.services.imap.renameFolder(identity, from, to),
    'RENAME completed',
  ),
  SUBSCRIBE: folderCommand(
    'SUBSCRIBE <mailbox>',
    1,
    (session, identity, [name]) => session.services.imap.subscribe(identity, name, true),
    'SUBSCRIBE completed',
  ),
  UNSUBSCRIBE: folderCommand(
    'UNSUBSCRIBE <mailbox>',
    1,
    (session, identity, [name]) => session.services.imap.subscribe(identity, name, false),
    'UNSUBSCRIBE completed',
  ),
};
