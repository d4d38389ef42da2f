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
 *   fields below.
 */
export { addressparser, SMTPConnection };

export type SmtpError = SMTPConnection.SMTPError & { recipient?: string; rejectedErrors?: SmtpError[] };

interface ConnectionInternals {
  /** The transaction in progress; `rejectedErrors` collects refused RCPTs. */
  _envelope?: { rejectedErrors?: SmtpError[] } | false;
}

const internals = (connection: SMTPConnection): ConnectionInternals => connection as unknown as ConnectionInternals;

/**
 * Per-RCPT refusals when DATA fails after some recipients were accepted: nodemailer hands
 * them over on success and when all were refused, but in this case only keeps them in its
 * envelope state.
 */
export const envelopeRejections = (connection: SMTPConnection): SmtpError[] => {
  const envelope = internals(connection)._envelope;
  return envelope ? envelope.rejectedErrors ?? [] : [];
};
