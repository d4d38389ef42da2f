import { AppError } from '../core/errors.js';
import { asAtom, asString, expectArgs, ParseError } from './parser.js';
import type { CommandSpec, ImapSession } from './session.js';

const ANY = ['not-authenticated', 'authenticated', 'selected'] as const;
const AUTHENTICATED = ['authenticated', 'selected'] as const;

/** RFC 3501 section 6.1; LITERAL+ (RFC 7888), SASL-IR (RFC 4959), IDLE (RFC 2177), UNSELECT (RFC 3691). */
export const capabilitiesOf = (session: ImapSession): string => {
  const base = 'IMAP4rev1 LITERAL+ SASL-IR IDLE UNSELECT';
  if (session.state !== 'not-authenticated') return base;
  return session.options.plaintextLoginAllowed ? `${base} AUTH=PLAIN` : `${base} LOGINDISABLED`;
};

const login = (session: ImapSession, username: string, secret: string, tag: string): string => {
  if (!session.options.plaintextLoginAllowed) {
    return 'NO [PRIVACYREQUIRED] plaintext login is disabled on a connection without TLS from outside this host';
  }
  try {
    session.loggedIn(session.services.imap.login(username, secret), secret);
  } catch (error) {
    if (error instanceof AppError && error.code === 'forbidden') return `NO [AUTHORIZATIONFAILED] ${error.message}`;
    session.logger.info('imap login refused', { tag });
    throw error;
  }
  return `OK [CAPABILITY ${session.capabilityList()}] logged in`;
};

/** RFC 4616 PLAIN: authzid NUL authcid NUL password, base64-encoded. */
const plain = (session: ImapSession, response: string, tag: string): string => {
  if (response === '*') return 'BAD AUTHENTICATE cancelled';
  const decoded = response === '=' ? '' : Buffer.from(response, 'base64').toString('utf8');
  const parts = decoded.split('\0');
  if (parts.length !== 3) throw new ParseError('malformed PLAIN response');
  const [authzid, authcid, password] = parts;
  if (authzid !== '' && authzid.toLowerCase() !== authcid.toLowerCase()) return 'NO [AUTHORIZATIONFAILED] cannot act as another user';
  return login(session, authcid, password, tag);
};

export const sessionCommands: Record<string, CommandSpec> = {
  CAPABILITY: {
    states: ANY,
    run: async (session) => {
      await session.untagged([`CAPABILITY ${session.capabilityList()}`]);
      return 'OK CAPABILITY completed';
    },
  },
  NOOP: { states: ANY, run: () => 'OK NOOP completed' },
  CHECK: { states: ['selected'], run: () => 'OK CHECK completed' },
  LOGOUT: {
    states: ANY,
    run: async (session, _args, command) => {
      await session.untagged(['BYE agentpost logging out']);
      await session.line(`${command.tag} OK LOGOUT completed`);
      session.close();
      session.output.end();
      return 'OK';
    },
  },
  LOGIN: {
    states: ['not-authenticated'],
    run: (session, args, command) => {
      expectArgs(args, 2, 'LOGIN <mailbox address> <full account key>');
      return login(session, asString(args[0], 'user name'), asString(args[1], 'password'), command.tag);
    },
  },
  AUTHENTICATE: {
    states: ['not-authenticated'],
    run: async (session, args, command) => {
      if (args.length < 1 || args.length > 2) throw new ParseError('usage: AUTHENTICATE PLAIN [initial response]');
      if (asAtom(args[0], 'mechanism').toUpperCase() !== 'PLAIN') return 'NO [CANNOT] only AUTHENTICATE PLAIN is supported';
      if (!session.options.plaintextLoginAllowed) return 'NO [PRIVACYREQUIRED] plaintext login is disabled on a connection without TLS from outside this host';
      if (args.length === 2) return plain(session, asString(args[1], 'initial response'), command.tag);
      session.awaitSaslResponse(command.tag, async (line) => plain(session, line, command.tag));
      await session.line('+ ');
      return '';
    },
  },
  IDLE: {
    states: AUTHENTICATED,
    run: async (session, args, command) => {
      expectArgs(args, 0, 'IDLE');
      await session.reportChanges();
      await session.startIdle(command.tag);
      return '';
    },
  },
};
