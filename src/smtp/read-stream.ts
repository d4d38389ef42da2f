import type { Readable } from 'node:stream';
import { IntakeFull, type MessageIntake, type ReceivedMessage } from '../core/message-intake.js';
import { smtpReply } from './replies.js';

/**
 * Receives a DATA stream through the intake (src/core/message-intake.ts): in memory under the
 * shared budget, or in the spool, read at the pace the spool is written. smtp-server keeps
 * counting past the SIZE limit and flags it: the message is dropped and null answered. A
 * spool that is full answers 452 4.3.1 (RFC 5321 section 4.2.2, RFC 3463 X.3.1), after the
 * whole message was read, as SMTP requires.
 */
export const readMessage = async (stream: Readable & { sizeExceeded?: boolean }, intake: MessageIntake): Promise<ReceivedMessage | null> => {
  const sink = intake.open();
  try {
    for await (const chunk of stream) {
      if (stream.sizeExceeded) sink.release();
      else sink.write(chunk as Buffer);
      if (sink.queuedBytes > 0) await sink.drain();
    }
    if (stream.sizeExceeded) return null;
    return await sink.end();
  } catch (error) {
    sink.release();
    throw error instanceof IntakeFull ? smtpReply(452, `4.3.1 ${error.message}`) : error;
  }
};
