import type { ErrorCode } from '../core/errors.js';

/** DESIGN.md rule 5: this adapter's table from error codes to the statuses of its pages. */
export const STATUS_OF: Record<ErrorCode, number> = {
  invalid_input: 400,
  unauthorized: 401,
  insufficient_credits: 402,
  payment_required: 402,
  feature_paused: 503,
  forbidden: 403,
  not_found: 404,
  conflict: 409,
  too_large: 413,
  rate_limited: 429,
  submission_failed: 502,
  unavailable: 503,
};
