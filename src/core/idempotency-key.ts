import { invalidInput } from './errors.js';

/**
 * The Idempotency-Key header, as every endpoint that takes one reads it: 1 to `maxChars`
 * characters (config `limits.idempotencyKeyMaxChars`, 128 by default).
 * Undefined when the request has none.
 */
export const checkIdempotencyKeyHeader = (header: string | undefined, maxChars: number): string | undefined => {
  if (header !== undefined && (header.length < 1 || header.length > maxChars)) {
    throw invalidInput('Idempotency-Key', `the Idempotency-Key header must be 1 to ${maxChars} characters`);
  }
  return header;
};
