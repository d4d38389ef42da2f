import { isAppError, type ErrorCode } from '../core/errors.js';

/**
 * DESIGN.md rule 5: this adapter's one table from service error codes to IMAP tagged
 * responses, with RFC 5530 response codes.
 */
const RESPONSE_OF: Record<ErrorCode, string> = {
  invalid_input: 'NO [CANNOT]',
  unauthorized: 'NO [AUTHENTICATIONFAILED]',
  forbidden: 'NO [NOPERM]',
  not_found: 'NO [NONEXISTENT]',
  conflict: 'NO [INUSE]',
  insufficient_credits: 'NO [LIMIT]',
  too_large: 'NO [TOOBIG]',
  rate_limited: 'NO [LIMIT]',
  submission_failed: 'NO [UNAVAILABLE]',
  unavailable: 'NO [UNAVAILABLE]',
  feature_paused: 'NO [UNAVAILABLE]',
};

/** Text after the tag for a failed command; null when the error is not a service error. */
export const responseForError = (error: unknown): string | null =>
  isAppError(error) ? `${RESPONSE_OF[error.code]} ${oneLine(error.message)}` : null;

/** Response text is one line of 7-bit characters (RFC 3501 section 9, resp-text). */
export const oneLine = (text: string): string => text.replace(/[^\x20-\x7e]+/g, ' ').trim();
