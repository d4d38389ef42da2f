/**
 * Errors that services raise. Each protocol has one table that maps these codes to it
 * (docs/design.md rule 5); anything that is not an AppError is an internal error.
 */
export type ErrorCode =
  | 'invalid_input'
  | 'unauthorized'
  | 'forbidden'
  | 'not_found'
  | 'conflict'
  | 'insufficient_credits'
  /** Paid owner access (hosting, a domain add-on) is needed first. */
  | 'payment_required'
  | 'too_large'
  | 'rate_limited'
  | 'submission_failed'
  | 'unavailable'
  /** A feature the operator turned off (funding.paused): 503 with a message that says so. */
  | 'feature_paused';

/**
 * docs/design.md rule 5, the HTTP table. Two adapters answer over HTTP, REST (`src/http/`) and the
 * owner console (`src/console/`), and they must not import each other (rule 2): the table
 * lives here so both give the same status for the same code.
 */
export const HTTP_STATUS_OF: Readonly<Record<ErrorCode, number>> = {
  invalid_input: 400,
  unauthorized: 401,
  insufficient_credits: 402,
  payment_required: 402,
  forbidden: 403,
  not_found: 404,
  conflict: 409,
  too_large: 413,
  rate_limited: 429,
  submission_failed: 502,
  unavailable: 503,
  feature_paused: 503,
};

export interface AppErrorDetails {
  /** Seconds until a rate-limited request may be retried (HTTP Retry-After). */
  retryAfterSeconds?: number;
  /** The request field the error is about, when there is one. */
  field?: string;
  /** What the conflict is with, for adapters that can say more than the code (IMAP's ALREADYEXISTS). */
  conflict?: 'exists' | 'children';
}

export class AppError extends Error {
  readonly code: ErrorCode;
  readonly details: AppErrorDetails;

  constructor(code: ErrorCode, message: string, details: AppErrorDetails = {}) {
    super(message);
    this.name = 'AppError';
    this.code = code;
    this.details = details;
  }
}

export const isAppError = (value: unknown): value is AppError => value instanceof AppError;

export const invalidInput = (field: string, message: string): AppError => new AppError('invalid_input', message, { field });
