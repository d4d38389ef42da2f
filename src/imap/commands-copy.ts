import { AppError } from '../core/errors.js';
import { IntakeFull, type ReceivedMessage } from '../core/message-intake.js';
import type { Folder, MessageFlags } from '../core/types.js';
import type { Appended } from '../services/mail/mailbox.js';
import { folderArg } from './commands-folders.js';
import { sendExpunged } from './commands-select.js';
import { appendFlags } from './flags.js';
import { parseImapDateTime } from './format.js';
import { asAtom, asBytes, asList, asString, ParseError, type Token } from './parser.js';
import { oneLine } from './replies.js';
import { uidSetText } from './sequence.js';
import type { CommandSpec, ImapSession } from './session.js';

const AUTHENTICATED = ['authenticated', 'selected'] as const;

/** The folder a COPY, MOVE or APPEND puts mail in; one that does not exist is NO [TRYCREATE] (RFC 3501 section 6.4.7). */
const targetFolder = async (session: ImapSession, token: Token | undefined): Promise<Folder | string> => {
  try {
    return await session.services.imap.folder(session.requireIdentity(), folderArg(token));
  } catch (error) {
    if (error instanceof AppError && error.code === 'not_found') return `NO [TRYCREATE] ${error.message}`;
    throw error;
  }
};

/**
 * COPY and MOVE (RFC 3501 section 6.4.7, RFC 6851), answered with COPYUID (RFC 4315).
 * MOVE sends COPYUID untagged, then the EXPUNGE (or VANISHED) of the originals.
 */
export const moveOrCopy = async (session: ImapSession, args: Token[], byUid: boolean, move: boolean): Promise<string> => {
  const verb = move ? 'MOVE' : 'COPY';
  if (args.length !== 2) throw new ParseError(`usage: ${verb} <sequence set> <mailbox>`);
  const view = session.requireView();
  const uids = view.resolve(asAtom(args[0], 'a sequence set'), byUid);
  const target = await targetFolder(session, args[1]);
  if (typeof target === 'string') return target;
  if (move && view.readOnly) return 'NO [READ-ONLY] the folder was opened with EXAMINE';
  const mail = session.services.imapMail;
  const identity = session.requireIdentity();
  const result = move ? await mail.move(identity, view.folder, uids, target) : await mail.copy(identity, view.folder, uids, target);
  if (result.pairs.length === 0) return `OK ${verb} completed (no messages)`;
  const copyUid = `COPYUID ${result.uidValidity} ${uidSetText(result.pairs.map(([from]) => from))} ${uidSetText(result.pairs.map(([, to]) => to))}`;
  if (!move) return `OK [${copyUid}] COPY completed`;
  await session.untagged([`OK [${copyUid}] moved`]);
  await sendExpunged(
    session,
    result.pairs.map(([from]) => from),
  );
  return 'OK MOVE completed';
};

/** APPEND (RFC 3501 section 6.3.11): mailbox [(flags)] [date-time] message; answered with APPENDUID (RFC 4315). */
const append = async (session: ImapSession, args: Token[]): Promise<string> => {
  if (args.length < 2 || args.length > 4) throw new ParseError('usage: APPEND <mailbox> [(<flags>)] [<date-time>] <message literal>');
  const target = await targetFolder(session, args[0]);
  let at = 1;
  const flagList = args[at]?.type === 'list' ? asList(args[at++], 'flags') : [];
  const flags = appendFlags(flagList);
  let receivedAt: number | undefined;
  if (at < args.length - 1) {
    const text = asString(args[at++], 'a date-time');
    const parsed = parseImapDateTime(text);
    if (parsed === null) throw new ParseError(`invalid date-time "${text.slice(0, 40)}", expected e.g. "02-Mar-2026 10:00:00 +0000"`);
    receivedAt = parsed;
  }
  const last = args[at];
  if (at !== args.length - 1 || (last.type !== 'string' && last.type !== 'message'))
    throw new ParseError('the message must be the last argument, as a literal');
  if (typeof target === 'string') return target;
  if (last.type === 'message') return appendReceived(session, target, last.message, flags, receivedAt);
  const raw = asBytes(last, 'the message');
  if (raw.length === 0) return 'NO [CANNOT] an empty message cannot be stored';
  return appended(await session.services.imapMail.append(session.requireIdentity(), target, raw, flags, receivedAt));
};

const appended = (result: Appended): string => `OK [APPENDUID ${result.uidValidity} ${result.uid}] APPEND completed`;

/**
 * A message the intake received (src/core/message-intake.ts): in memory until it is stored, a
 * spooled one once its turn in the budget comes. One the spool had no room for is NO [LIMIT]
 * (RFC 5530: an implementation limit; the client may try again later).
 */
const appendReceived = async (
  session: ImapSession,
  target: Folder,
  message: Promise<ReceivedMessage>,
  flags: MessageFlags,
  receivedAt: number | undefined,
): Promise<string> => {
  let received: ReceivedMessage;
  try {
    received = await message;
  } catch (error) {
    if (error instanceof IntakeFull) return `NO [LIMIT] ${oneLine(error.message)}`;
    throw error;
  }
  try {
    return appended(await session.services.imapMail.append(session.requireIdentity(), target, await received.load(), flags, receivedAt));
  } finally {
    received.release();
  }
};

export const copyCommands: Record<string, CommandSpec> = {
  APPEND: { states: AUTHENTICATED, run: append },
};
