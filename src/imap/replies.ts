import { isAppError, type ErrorCode } from '../core/errors.js';

/**
 * docs/design.md rule 5: this adapter's one table from service error codes to IMAP tagged
 * responses, with RFC 5530 response codes.
 */
const RESPONSE_OF: Record<ErrorCode, string> = {
  invalid_input: 'NO [CANNOT]',
  unauthorized: 'NO [AUTHENTICATIONFAILED]',
  forbidden: 'NO [NOPERM]',
  not_found: 'NO [NONEXISTENT]',
  conflict: 'NO [INUSE]',
  insufficient_credits: 'NO [LIMIT]',
  payment_required: 'NO [LIMIT]',
  // A limit of the implementation (folders per mailbox); a message too large to APPEND is refused by the reader.
  too_large: 'NO [LIMIT]',
  rate_limited: 'NO [LIMIT]',
  submission_failed: 'NO [UNAVAILABLE]',
  unavailable: 'NO [UNAVAILABLE]',
  feature_paused: 'NO [UNAVAILABLE]',
};

/** Text after the tag for a failed command; null when the error is not a service error. */
export const responseForError = (error: unknown): string | null => {
  if (!isAppError(error)) return null;
  // RFC 5530: ALREADYEXISTS for a name taken, INUSE for a folder that has others below it.
  const code = error.code === 'conflict' && error.details.conflict === 'exists' ? 'NO [ALREADYEXISTS]' : RESPONSE_OF[error.code];
  return `${code} ${oneLine(error.message)}`;
};

/** Response text is one line of 7-bit characters (RFC 3501 section 9, resp-text). */
export const oneLine = (text: string): string => text.replace(/[^\x20-\x7e]+/g, ' ').trim();
