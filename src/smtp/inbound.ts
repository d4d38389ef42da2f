import { SMTPServer, type SMTPServerDataStream, type SMTPServerSession } from 'smtp-server';
import type { Logger } from '../core/logger.js';
import type { ServerCertificates } from '../core/tls.js';
import type { SmtpServices } from './services.js';
import { ROOM_FOR_TRACE_FIELDS } from '../services/mail/inbound.js';
import { listenerOptions, type ListenerOptions } from './listener-options.js';
import { readMessage } from './read-stream.js';
import { recipientCapReply, replyForError, smtpReply } from './replies.js';
import { certificateOptions, tlsOf } from './tls.js';

export interface InboundOptions extends ListenerOptions {
  /** Accepted recipients per message; 452 4.5.3 past it. */
  maxRecipients: number;
  /** With certificates the MX offers STARTTLS; a client may still send in the clear (RFC 3207 section 4). */
  certificates: ServerCertificates | null;
}

/**
 * The MX: accepts mail for local mailboxes only (550 5.1.1 at RCPT for anything else),
 * and answers 250 only after every copy is committed. Each accepted recipient is a stored
 * copy, so recipients per message are capped (RFC 5321 4.5.3.1.10: 452 for the rest, which
 * the client sends again in another transaction).
 */
export const createInboundServer = (services: SmtpServices, logger: Logger, options: InboundOptions): SMTPServer =>
  new SMTPServer({
    ...listenerOptions(options),
    // smtp-server greets with `220 <name> ESMTP <banner>`: the banner names only the service.
    banner: 'agentpost',
    authOptional: true,
    ...(options.certificates ? certificateOptions(options.certificates, ['AUTH']) : { disabledCommands: ['AUTH', 'STARTTLS'] }),
    onRcptTo(address, session, callback) {
      // Checked first, as Postfix does: past the cap the client comes back later anyway.
      const overCap = recipientCapReply(session, address.address, options.maxRecipients);
      if (overCap) return callback(overCap);
      services.inbound.acceptsRecipient(address.address).then(
        (accepted) => callback(accepted ? undefined : smtpReply(550, `5.1.1 <${address.address}>: no such mailbox here`)),
        (error: unknown) => callback(replyForError(error)),
      );
    },
    onData(stream, session, callback) {
      receive(services, logger, stream, session, options).then(
        (reply) => callback(null, reply),
        (error: unknown) => callback(error instanceof Error && 'responseCode' in error ? error : replyForError(error)),
      );
    },
  });

const receive = async (
  services: SmtpServices,
  logger: Logger,
  stream: SMTPServerDataStream,
  session: SMTPServerSession,
  options: InboundOptions,
): Promise<string> => {
  const received = await readMessage(stream, options.intake);
  if (received === null) throw smtpReply(552, `5.3.4 Message exceeds the ${options.maxMessageBytes}-byte size limit`);
  const recipients = session.envelope.rcptTo.map((rcpt) => rcpt.address);
  try {
    // In memory until it is stored and answered; a spooled message waits here for its turn.
    const raw = await received.load(ROOM_FOR_TRACE_FIELDS);
    await services.inbound.deliver({
      session: {
        id: session.id,
        remoteAddress: session.remoteAddress,
        heloName: session.hostNameAppearsAs,
        protocol: session.transmissionType,
        tls: tlsOf(session),
      },
      mailFrom: session.envelope.mailFrom ? session.envelope.mailFrom.address : '',
      recipients,
      raw,
      room: ROOM_FOR_TRACE_FIELDS,
    });
  } catch (error) {
    logger.warn('inbound delivery failed', { session: session.id, error: error instanceof Error ? error.message : String(error) });
    throw replyForError(error);
  } finally {
    received.release();
  }
  return `2.0.0 Ok: stored as ${session.id}`;
};
