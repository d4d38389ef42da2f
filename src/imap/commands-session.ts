import { AppError } from '../core/errors.js';
import { asAtom, asString, expectArgs, ParseError } from './parser.js';
import type { CommandSpec, ImapSession } from './session.js';

const ANY = ['not-authenticated', 'authenticated', 'selected'] as const;
const AUTHENTICATED = ['authenticated', 'selected'] as const;

/**
 * Only what works is advertised: RFC 3501, LITERAL+ (RFC 7888), SASL-IR (RFC 4959), IDLE
 * (RFC 2177), UNSELECT (RFC 3691), UIDPLUS (RFC 4315), MOVE (RFC 6851), SPECIAL-USE
 * (RFC 6154), LIST-EXTENDED (RFC 5258), LIST-STATUS (RFC 5819), CHILDREN (RFC 3348),
 * ENABLE (RFC 5161), CONDSTORE and QRESYNC (RFC 7162), NAMESPACE (RFC 2342), ID (RFC 2971),
 * APPENDLIMIT (RFC 7889). Before login: STARTTLS while the connection is in the clear and a
 * certificate is configured, and LOGINDISABLED where a password may not travel in the clear
 * (section 6.2.3).
 */
const EXTENSIONS = 'IMAP4rev1 LITERAL+ SASL-IR IDLE UNSELECT UIDPLUS MOVE SPECIAL-USE LIST-EXTENDED LIST-STATUS CHILDREN ENABLE CONDSTORE QRESYNC NAMESPACE ID';

export const capabilitiesFor =
  (appendLimit: number) =>
  (session: ImapSession): string => {
    const base = `${EXTENSIONS} APPENDLIMIT=${appendLimit}`;
    if (session.state !== 'not-authenticated') return base;
    const startTls = session.options.startTlsOffered ? ' STARTTLS' : '';
    return `${base}${startTls} ${session.options.plaintextLoginAllowed ? 'AUTH=PLAIN' : 'LOGINDISABLED'}`;
  };

const login = async (session: ImapSession, username: string, secret: string, tag: string): Promise<string> => {
  if (!session.options.plaintextLoginAllowed) {
    return 'NO [PRIVACYREQUIRED] plaintext login is disabled on a connection without TLS from outside this host';
  }
  try {
    session.loggedIn(await session.services.imap.login(username, secret));
  } catch (error) {
    if (error instanceof AppError && error.code === 'forbidden') return `NO [AUTHORIZATIONFAILED] ${error.message}`;
    session.logger.info('imap login refused', { tag });
    throw error;
  }
  return `OK [CAPABILITY ${session.capabilityList()}] logged in`;
};

/** RFC 4616 PLAIN: authzid NUL authcid NUL password, base64-encoded. */
const plain = async (session: ImapSession, response: string, tag: string): Promise<string> => {
  if (response === '*') return 'BAD AUTHENTICATE cancelled';
  const decoded = response === '=' ? '' : Buffer.from(response, 'base64').toString('utf8');
  const parts = decoded.split('\0');
  if (parts.length !== 3) throw new ParseError('malformed PLAIN response');
  const [authzid, authcid, password] = parts;
  if (authzid !== '' && authzid.toLowerCase() !== authcid.toLowerCase()) return 'NO [AUTHORIZATIONFAILED] cannot act as another user';
  return await login(session, authcid, password, tag);
};

/** RFC 2971: what we say about ourselves; the client's own fields are read and not kept. */
const ID_FIELDS = '("name" "agentpost" "vendor" "agentpost")';

export const sessionCommands: Record<string, CommandSpec> = {
  CAPABILITY: {
    states: ANY,
    run: async (session) => {
      await session.untagged([`CAPABILITY ${session.capabilityList()}`]);
      return 'OK CAPABILITY completed';
    },
  },
  NOOP: { states: ANY, run: () => 'OK NOOP completed' },
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
    run: async (session, args, command) => {
      expectArgs(args, 2, 'LOGIN <mailbox address> <full account key>');
      return await login(session, asString(args[0], 'user name'), asString(args[1], 'password'), command.tag);
    },
  },
  AUTHENTICATE: {
    states: ['not-authenticated'],
    run: async (session, args, command) => {
      if (args.length < 1 || args.length > 2) throw new ParseError('usage: AUTHENTICATE PLAIN [initial response]');
      if (asAtom(args[0], 'mechanism').toUpperCase() !== 'PLAIN') return 'NO [CANNOT] only AUTHENTICATE PLAIN is supported';
      if (!session.options.plaintextLoginAllowed) return 'NO [PRIVACYREQUIRED] plaintext login is disabled on a connection without TLS from outside this host';
      if (args.length === 2) return await plain(session, asString(args[1], 'initial response'), command.tag);
      session.awaitSaslResponse(command.tag, (line) => plain(session, line, command.tag));
      await session.line('+ ');
      return '';
    },
  },
  STARTTLS: {
    states: ['not-authenticated'],
    // RFC 3501 section 6.2.1: the tagged OK, then the handshake; the client asks CAPABILITY again.
    run: async (session, args, command) => {
      expectArgs(args, 0, 'STARTTLS');
      if (!session.options.startTlsOffered) return 'BAD STARTTLS is not available on this connection';
      await session.line(`${command.tag} OK Begin TLS negotiation now`);
      if (await session.output.startTls()) session.secured();
      else session.close();
      return null;
    },
  },
  IDLE: {
    states: AUTHENTICATED,
    run: async (session, args, command) => {
      expectArgs(args, 0, 'IDLE');
      await session.report();
      await session.startIdle(command.tag);
      return '';
    },
  },
  /** RFC 5161; QRESYNC implies CONDSTORE (RFC 7162 section 3.2.3). */
  ENABLE: {
    states: ['authenticated'],
    run: async (session, args) => {
      if (args.length === 0) throw new ParseError('usage: ENABLE <capability>...');
      const enabled: string[] = [];
      for (const arg of args) {
        const name = asAtom(arg, 'a capability name').toUpperCase();
        if (name !== 'CONDSTORE' && name !== 'QRESYNC') continue;
        for (const extension of name === 'QRESYNC' ? (['QRESYNC', 'CONDSTORE'] as const) : (['CONDSTORE'] as const)) {
          if (!session.enabled.has(extension)) enabled.push(extension);
          session.enabled.add(extension);
        }
      }
      await session.untagged([['ENABLED', ...enabled].join(' ')]);
      return 'OK ENABLE completed';
    },
  },
  ID: {
    states: ANY,
    run: async (session, args) => {
      expectArgs(args, 1, 'ID NIL | ID (<field> <value> ...)');
      const [fields] = args;
      if (!(fields.type === 'atom' && fields.value.toUpperCase() === 'NIL') && fields.type !== 'list') throw new ParseError('ID takes NIL or a list');
      if (fields.type === 'list' && (fields.items.length % 2 !== 0 || fields.items.length > 60))
        throw new ParseError('ID takes at most 30 field and value pairs');
      await session.untagged([`ID ${ID_FIELDS}`]);
      return 'OK ID completed';
    },
  },
  /** RFC 2342: one personal namespace, no prefix, "/" between levels; no shared or other users' folders. */
  NAMESPACE: {
    states: AUTHENTICATED,
    run: async (session, args) => {
      expectArgs(args, 0, 'NAMESPACE');
      await session.untagged(['NAMESPACE (("" "/")) NIL NIL']);
      return 'OK NAMESPACE completed';
    },
  },
};
