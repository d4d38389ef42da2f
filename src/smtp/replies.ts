import type { SMTPServerSession } from 'smtp-server';
import { isAppError, type ErrorCode } from '../core/errors.js';

/** An Error that smtp-server turns into an SMTP reply with this code. */
export const smtpReply = (responseCode: number, text: string): Error & { responseCode: number } => Object.assign(new Error(text), { responseCode });

/**
 * RFC 5321 section 4.5.3.1.10: past a server's recipient limit, 452 (the client sends the
 * rest in another transaction); 4.5.3 is RFC 3463's "too many recipients". Repeating a
 * recipient already accepted adds nothing, so it is not refused.
 */
export const recipientCapReply = (session: SMTPServerSession, address: string, max: number): Error | null => {
  const rcptTo = session.envelope.rcptTo;
  if (rcptTo.length < max) return null;
  const lower = address.toLowerCase();
  if (rcptTo.some((rcpt) => rcpt.address.toLowerCase() === lower)) return null;
  return smtpReply(452, `4.5.3 at most ${max} recipients per message`);
};

/** docs/design.md rule 5: this adapter's one table from error codes to SMTP replies (RFC 3463 codes). */
const REPLY_OF: Record<ErrorCode, [number, string]> = {
  invalid_input: [550, '5.6.0'],
  unauthorized: [535, '5.7.8'],
  forbidden: [550, '5.7.1'],
  not_found: [550, '5.1.1'],
  conflict: [550, '5.7.0'],
  insufficient_credits: [554, '5.7.0'],
  payment_required: [554, '5.7.0'],
  too_large: [552, '5.3.4'],
  rate_limited: [451, '4.7.1'],
  submission_failed: [451, '4.3.0'],
  unavailable: [451, '4.3.0'],
  feature_paused: [550, '5.3.3'],
};

/** Anything that is not an AppError is a temporary local failure: the client will retry. */
export const replyForError = (error: unknown): Error & { responseCode: number } => {
  if (!isAppError(error)) return smtpReply(451, '4.3.0 Local error in processing; try again later');
  const [code, enhanced] = REPLY_OF[error.code];
  return smtpReply(code, `${enhanced} ${error.message.replace(/[\r\n]+/g, ' ')}`);
};
