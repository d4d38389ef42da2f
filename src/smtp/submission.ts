import ipaddr from 'ipaddr.js';
import { SMTPServer, type SMTPServerAuthentication, type SMTPServerDataStream, type SMTPServerSession } from 'smtp-server';
import { isValidAddress } from '../core/addresses.js';
import { isAppError } from '../core/errors.js';
import type { Logger } from '../core/logger.js';
import type { ServerCertificates } from '../core/tls.js';
import type { Principal } from '../core/types.js';
import type { SmtpServices } from './services.js';
import { listenerOptions, type ListenerOptions } from './listener-options.js';
import { readMessage } from './read-stream.js';
import { recipientCapReply, replyForError, smtpReply } from './replies.js';
import { certificateOptions } from './tls.js';

export interface SubmissionOptions extends ListenerOptions {
  /** Allow AUTH without TLS from non-loopback clients (config submission.allowInsecureAuth). */
  allowInsecureAuth: boolean;
  /** With certificates the plain port offers STARTTLS; without, no TLS at all. */
  certificates: ServerCertificates | null;
  /** The implicit-TLS port (RFC 8314 section 3.3): TLS from the first byte. Needs certificates. */
  implicitTls?: boolean;
  /** RFC 5321 section 4.5.3.1.8 allows a server to cap recipients (config `limits.recipientsPerMessage`). */
  maxRecipients: number;
}

/**
 * SMTP submission (RFC 6409): AUTH PLAIN or LOGIN with the mailbox address and the full
 * account key, then the message goes through the same send service as REST: same rules,
 * credits, limits and idempotency (by Message-ID). With certificates the plain port offers
 * STARTTLS and a second listener speaks implicit TLS (RFC 8314); AUTH without TLS from a
 * non-loopback address is refused unless the operator allows it (RFC 4954 section 4: 538).
 */
export const createSubmissionServer = (services: SmtpServices, logger: Logger, options: SubmissionOptions): SMTPServer =>
  new SMTPServer({
    ...listenerOptions(options),
    banner: 'agentpost submission',
    authMethods: ['PLAIN', 'LOGIN'],
    // Our own rule below decides; smtp-server's would refuse loopback too.
    allowInsecureAuth: true,
    ...(options.certificates ? certificateOptions(options.certificates, options.implicitTls ? ['STARTTLS'] : []) : { disabledCommands: ['STARTTLS'] }),
    secure: options.implicitTls === true,
    onAuth(auth, session, callback) {
      authenticate(services, auth, session, options).then(
        (outcome) => callback(...outcome),
        (error: unknown) => callback(replyForError(error)),
      );
    },
    onMailFrom(_address, session, callback) {
      keyRevokedSinceAuth(services, session).then(callback, (error: unknown) => callback(replyForError(error)));
    },
    onRcptTo(address, session, callback) {
      if (!isValidAddress(address.address)) return callback(smtpReply(553, `5.1.3 <${address.address}>: not a valid address`));
      // A send goes to at most 50 recipients (`limits.recipientsPerMessage`, docs/agents/sending.md).
      callback(recipientCapReply(session, address.address, options.maxRecipients));
    },
    onData(stream, session, callback) {
      submit(services, logger, stream, session, options).then(
        (reply) => callback(null, reply),
        (error: unknown) => callback(error instanceof Error && 'responseCode' in error ? error : replyForError(error)),
      );
    },
  });

type AuthOutcome = [Error | null, { user?: unknown }?];

const authenticate = async (
  services: SmtpServices,
  auth: SMTPServerAuthentication,
  session: SMTPServerSession,
  options: SubmissionOptions,
): Promise<AuthOutcome> => {
  if (!session.secure && !options.allowInsecureAuth && !isLoopback(session.remoteAddress)) {
    return [smtpReply(538, '5.7.11 Encryption required for requested authentication mechanism')];
  }
  try {
    const principal = await services.auth.authenticateMailbox(auth.username ?? '', auth.password ?? '');
    return [null, { user: principal }];
  } catch (error) {
    // A refused access key says why; anything else is the usual 535 (RFC 4954 section 6).
    const why = isAppError(error) && error.code === 'forbidden' ? error.message : 'Authentication credentials invalid';
    return [smtpReply(535, `5.7.8 ${why}`)];
  }
};

/**
 * A key revoked, rotated away or expired after AUTH no longer sends in the open session.
 * RFC 4954 section 6: 530 5.7.0 answers a command that needs authentication when none is
 * in force (535 5.7.8 answers the AUTH command itself), so the session forgets the login:
 * the client may AUTH again with a valid key, in this connection or a new one.
 */
const keyRevokedSinceAuth = async (services: SmtpServices, session: SMTPServerSession): Promise<Error | null> => {
  const principal = session.user as Principal | undefined;
  if (principal && (await services.auth.stillValid(principal))) return null;
  session.user = undefined;
  return smtpReply(530, '5.7.0 Authentication required: the key was revoked or expired since AUTH');
};

const isLoopback = (address: string): boolean => {
  try {
    return ipaddr.process(address).range() === 'loopback';
  } catch {
    return false;
  }
};

const submit = async (
  services: SmtpServices,
  logger: Logger,
  stream: SMTPServerDataStream,
  session: SMTPServerSession,
  options: SubmissionOptions,
): Promise<string> => {
  const received = await readMessage(stream, options.intake);
  if (received === null) throw smtpReply(552, `5.3.4 Message exceeds the ${options.maxMessageBytes}-byte size limit`);
  try {
    // Checked again after the content arrived, just before anything is charged.
    const revoked = await keyRevokedSinceAuth(services, session);
    if (revoked) throw revoked;
    const principal = session.user as Principal;
    const envelope = {
      from: session.envelope.mailFrom === false ? '' : session.envelope.mailFrom.address,
      to: session.envelope.rcptTo.map((rcpt) => rcpt.address),
    };
    // In memory until it is accepted and answered; a spooled message waits here for its turn.
    const raw = await received.load();
    try {
      const result = await services.sending.submitRaw(principal, envelope, raw);
      return `2.0.0 Ok: accepted as ${result.id}${result.replayed ? ' (already accepted earlier)' : ''}`;
    } catch (error) {
      logger.info('submission refused', { session: session.id, error: error instanceof Error ? error.message : String(error) });
      throw error;
    }
  } finally {
    received.release();
  }
};
