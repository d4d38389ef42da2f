import type { TLSSocket } from 'node:tls';
import addressparser from 'nodemailer/lib/addressparser';
import SMTPConnection from 'nodemailer/lib/smtp-connection';

/**
 * The one place that reaches past nodemailer's documented API (createTransport, sendMail and
 * their options, which compose.ts and the DKIM signer use). Each item says why it is needed;
 * when nodemailer changes, this file and its tests are what to look at.
 *
 * - `addressparser`: RFC 5322 address lists with display names, groups and comments. Only
 *   the `nodemailer/lib/addressparser` subpath exports it; a parser of our own would be a
 *   second one to keep right.
 * - `SMTPConnection`: delivery needs each recipient's own RCPT answer, and must know whether
 *   the content went out before a connection broke (RFC 5321 section 6.1: then the outcome is
 *   unknown). The public SMTP transport folds both into one error, so the connection class
 *   from the `nodemailer/lib/smtp-connection` subpath is used directly, with the private
 *   fields below: the RCPT answers kept in `_envelope`, the EHLO keywords in
 *   `_supportedExtensions`, `_sendCommand` to declare SMTPUTF8 where nodemailer would not, and
 *   `_socket` to tell whether the server's certificate verified (MTA-STS testing reports).
 */
export { addressparser, SMTPConnection };

export type SmtpError = SMTPConnection.SMTPError & { recipient?: string; rejectedErrors?: SmtpError[] };

interface ConnectionInternals {
  /** The transaction in progress: `accepted` and `rejectedErrors` collect the RCPT answers. */
  _envelope?: { accepted?: string[]; rejectedErrors?: SmtpError[] } | false;
  /** EHLO keywords nodemailer recognised (8BITMIME, SMTPUTF8, SIZE, PIPELINING, ...). */
  _supportedExtensions?: string[];
  _sendCommand?: (command: string, logCommand?: string) => void;
  /** The session's socket; after STARTTLS the TLSSocket. */
  _socket?: Partial<TLSSocket> | false;
}

const internals = (connection: SMTPConnection): ConnectionInternals => connection as unknown as ConnectionInternals;

/**
 * Per-RCPT refusals when DATA fails after some recipients were accepted: nodemailer hands
 * them over on success and when all were refused, but in this case only keeps them in its
 * envelope state.
 */
export const envelopeRejections = (connection: SMTPConnection): SmtpError[] => {
  const envelope = internals(connection)._envelope;
  return envelope ? (envelope.rejectedErrors ?? []) : [];
};

/** The recipients the server accepted at RCPT so far, known only from the envelope state; null if none is kept. */
export const envelopeAccepted = (connection: SMTPConnection): string[] | null => {
  const envelope = internals(connection)._envelope;
  return envelope && Array.isArray(envelope.accepted) ? [...envelope.accepted] : null;
};

/** The server's EHLO extensions, which nodemailer parses but does not expose. */
export const serverExtensions = (connection: SMTPConnection): ReadonlySet<string> => new Set(internals(connection)._supportedExtensions ?? []);

/**
 * Adds SMTPUTF8 to the next MAIL FROM; returns the function that undoes it. nodemailer
 * declares SMTPUTF8 only when an envelope address is non-ASCII, but RFC 6531 section 3.4 needs
 * it as well for a message whose header fields carry UTF-8 (RFC 6532) under an all-ASCII
 * envelope. The caller has checked that the server offers SMTPUTF8.
 */
export const declareSmtpUtf8 = (connection: SMTPConnection): (() => void) => {
  const target = internals(connection);
  const original = target._sendCommand;
  if (typeof original !== 'function') throw new Error('nodemailer changed: SMTPConnection has no _sendCommand');
  const restore = () => {
    delete target._sendCommand;
  };
  target._sendCommand = function sendCommand(this: unknown, command: string, logCommand?: string) {
    if (!command.startsWith('MAIL FROM:')) return original.call(this, command, logCommand);
    restore();
    const declared = / SMTPUTF8(\s|$)/.test(command) ? command : `${command} SMTPUTF8`;
    return original.call(this, declared, logCommand === undefined ? undefined : declared);
  };
  return restore;
};

/**
 * Whether the session's TLS certificate verified (chain and name, as node:tls judged it with
 * the connection's `tls` options), and node's reason when it did not; null in the clear.
 */
export const peerVerification = (connection: SMTPConnection): { authorized: boolean; error?: string } | null => {
  const socket = internals(connection)._socket;
  if (!connection.secure || !socket) return null;
  return socket.authorized ? { authorized: true } : { authorized: false, error: String(socket.authorizationError ?? 'unknown') };
};
