import { INBOX } from '../services/mail/mailbox.js';
import { serializeAll, str, atom, type ImapValue } from './format.js';
import { asAtom, asList, asString, expectArgs, ParseError } from './parser.js';
import { sequenceOf } from './sequence.js';
import type { CommandSpec, ImapSession } from './session.js';

const AUTHENTICATED = ['authenticated', 'selected'] as const;
const DELIMITER = '/';
/** The only flags stored (the same columns REST shows as isRead and isStarred). */
export const SUPPORTED_FLAGS = '(\\Seen \\Flagged)';

/** RFC 3501 section 6.3.8: `*` matches anything, `%` anything but the hierarchy delimiter. */
const listPattern = (reference: string, pattern: string, flags = ''): RegExp => {
  const full = reference + pattern;
  const source = [...full].map((char) => (char === '*' ? '.*' : char === '%' ? '[^/]*' : char.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'))).join('');
  return new RegExp(`^${source}$`, flags);
};

/** RFC 6154 special-use attributes of the folders agentpost keeps. */
const SPECIAL_USE: Record<string, string> = { Sent: ' \\Sent', Drafts: ' \\Drafts' };
const attributesOf = (name: string): string => `(\\HasNoChildren${SPECIAL_USE[name] ?? ''})`;

const list = async (session: ImapSession, args: ReturnType<typeof asList>, verb: 'LIST' | 'LSUB'): Promise<string> => {
  expectArgs(args, 2, `${verb} <reference> <mailbox pattern>`);
  const reference = asString(args[0], 'reference name');
  const pattern = asString(args[1], 'mailbox pattern');
  if (pattern === '') {
    await session.untagged([`${verb} (\\Noselect) "${DELIMITER}" ""`]);
    return `OK ${verb} completed`;
  }
  const matcher = listPattern(reference, pattern);
  // INBOX matches in any case (RFC 3501 section 5.1).
  const inboxMatcher = listPattern(reference, pattern, 'i');
  for (const folder of session.services.imap.folders(session.requireIdentity())) {
    if (!(folder.name === INBOX ? inboxMatcher : matcher).test(folder.name)) continue;
    await session.untagged([`${verb} ${attributesOf(folder.name)} "${DELIMITER}" `, ...serializeAll([str(folder.name)])]);
  }
  return `OK ${verb} completed`;
};

const select = async (session: ImapSession, args: ReturnType<typeof asList>, readOnly: boolean): Promise<string> => {
  expectArgs(args, 1, readOnly ? 'EXAMINE <mailbox>' : 'SELECT <mailbox>');
  const name = asString(args[0], 'mailbox name');
  // A SELECT that fails leaves no folder selected (RFC 3501 section 6.3.1).
  session.selection = null;
  session.state = 'authenticated';
  const snapshot = session.services.imap.open(session.requireIdentity(), name);
  const { folder, uids } = snapshot;
  session.selection = { folder, uids, readOnly };
  session.state = 'selected';
  await session.untagged([`FLAGS ${SUPPORTED_FLAGS}`]);
  await session.untagged([`OK [PERMANENTFLAGS ${readOnly ? '()' : SUPPORTED_FLAGS}] flags you can change`]);
  await session.untagged([`${uids.length} EXISTS`]);
  await session.untagged(['0 RECENT']);
  if (snapshot.firstUnseenUid !== null) await session.untagged([`OK [UNSEEN ${sequenceOf(uids, snapshot.firstUnseenUid)}] first unseen`]);
  await session.untagged([`OK [UIDVALIDITY ${folder.uidValidity}] UIDs valid`]);
  await session.untagged([`OK [UIDNEXT ${folder.uidNext}] predicted next UID`]);
  return `OK [${readOnly ? 'READ-ONLY' : 'READ-WRITE'}] ${readOnly ? 'EXAMINE' : 'SELECT'} completed`;
};

const STATUS_ITEMS = new Set(['MESSAGES', 'RECENT', 'UIDNEXT', 'UIDVALIDITY', 'UNSEEN']);

const status = async (session: ImapSession, args: ReturnType<typeof asList>): Promise<string> => {
  expectArgs(args, 2, 'STATUS <mailbox> (<items>)');
  const name = asString(args[0], 'mailbox name');
  const items = asList(args[1], 'a list of status items').map((item) => asAtom(item, 'a status item').toUpperCase());
  const unknown = items.find((item) => !STATUS_ITEMS.has(item));
  if (unknown) throw new ParseError(`unknown STATUS item ${unknown}`);
  const found = session.services.imap.status(session.requireIdentity(), name);
  const values: Record<string, number> = {
    MESSAGES: found.messages, RECENT: 0, UIDNEXT: found.uidNext, UIDVALIDITY: found.uidValidity, UNSEEN: found.unseen,
  };
  const pairs: ImapValue[] = items.flatMap((item) => [atom(item), values[item]]);
  await session.untagged(['STATUS ', ...serializeAll([str(found.name)]), ' ', ...serializeAll([pairs])]);
  return 'OK STATUS completed';
};

const deselect = (session: ImapSession): void => {
  session.selection = null;
  session.state = 'authenticated';
};

const fixedFolders = (): string => 'NO [CANNOT] folders are fixed: INBOX and Sent';

export const mailboxCommands: Record<string, CommandSpec> = {
  LIST: { states: AUTHENTICATED, run: (session, args) => list(session, args, 'LIST') },
  // Every folder is always subscribed.
  LSUB: { states: AUTHENTICATED, run: (session, args) => list(session, args, 'LSUB') },
  SUBSCRIBE: {
    states: AUTHENTICATED,
    run: (session, args) => {
      expectArgs(args, 1, 'SUBSCRIBE <mailbox>');
      session.services.imap.status(session.requireIdentity(), asString(args[0], 'mailbox name'));
      return 'OK SUBSCRIBE completed (folders are always subscribed)';
    },
  },
  UNSUBSCRIBE: { states: AUTHENTICATED, run: () => 'NO [CANNOT] folders are always subscribed' },
  SELECT: { states: AUTHENTICATED, run: (session, args) => select(session, args, false) },
  EXAMINE: { states: AUTHENTICATED, run: (session, args) => select(session, args, true) },
  STATUS: { states: AUTHENTICATED, run: status },
  CREATE: { states: AUTHENTICATED, run: fixedFolders },
  DELETE: { states: AUTHENTICATED, run: fixedFolders },
  RENAME: { states: AUTHENTICATED, run: fixedFolders },
  APPEND: { states: AUTHENTICATED, run: () => 'NO [CANNOT] APPEND is not supported; send mail by SMTP or REST' },
  // \Deleted is not a permanent flag here, so there is never anything to expunge.
  CLOSE: { states: ['selected'], run: (session) => (deselect(session), 'OK CLOSE completed') },
  UNSELECT: { states: ['selected'], run: (session) => (deselect(session), 'OK UNSELECT completed') },
  EXPUNGE: { states: ['selected'], run: () => 'OK EXPUNGE completed (nothing is marked \\Deleted)' },
  COPY: { states: ['selected'], run: () => 'NO [CANNOT] COPY is not supported' },
  MOVE: { states: ['selected'], run: () => 'NO [CANNOT] MOVE is not supported' },
};
