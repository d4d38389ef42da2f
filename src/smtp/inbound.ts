import { SMTPServer, type SMTPServerDataStream, type SMTPServerSession } from 'smtp-server';
import type { Logger } from '../core/logger.js';
import type { Services } from '../services/index.js';
import { readMessage } from './read-stream.js';
import { replyForError, smtpReply } from './replies.js';

export interface InboundOptions {
  hostname: string;
  maxMessageBytes: number;
}

/**
 * The MX: accepts mail for local mailboxes only (550 5.1.1 at RCPT for anything else),
 * and answers 250 only after every copy is committed.
 */
export const createInboundServer = (services: Services, logger: Logger, options: InboundOptions): SMTPServer =>
  new SMTPServer({
    name: options.hostname,
    banner: 'agentpost ESMTP',
    size: options.maxMessageBytes,
    authOptional: true,
    disabledCommands: ['AUTH', 'STARTTLS'],
    disableReverseLookup: true,
    logger: false,
    closeTimeout: 5000,
    onRcptTo(address, _session, callback) {
      if (services.inbound.acceptsRecipient(address.address)) return callback();
      callback(smtpReply(550, `5.1.1 <${address.address}>: no such mailbox here`));
    },
    onData(stream, session, callback) {
      receive(services, logger, stream, session, options).then(
        (reply) => callback(null, reply),
        (error: unknown) => callback(error instanceof Error && 'responseCode' in error ? error : replyForError(error)),
      );
    },
  });

const receive = async (
  services: Services,
  logger: Logger,
  stream: SMTPServerDataStream,
  session: SMTPServerSession,
  options: InboundOptions,
): Promise<string> => {
  const raw = await readMessage(stream);
  if (raw === null) throw smtpReply(552, `5.3.4 Message exceeds the ${options.maxMessageBytes}-byte size limit`);
  const recipients = session.envelope.rcptTo.map((rcpt) => rcpt.address);
  try {
    await services.inbound.deliver({
      session: { id: session.id, remoteAddress: session.remoteAddress, heloName: session.hostNameAppearsAs, protocol: session.transmissionType },
      recipients,
      raw,
    });
  } catch (error) {
    logger.warn('inbound delivery failed', { session: session.id, error: error instanceof Error ? error.message : String(error) });
    throw replyForError(error);
  }
  return `2.0.0 Ok: stored as ${session.id}`;
};
