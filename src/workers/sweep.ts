import type { Services } from '../services/index.js';

/** The longest window any rate rule counts over (registrations: one hour). */
const LONGEST_RATE_WINDOW_MS = 24 * 60 * 60 * 1000;

/** Housekeeping: drops rate-limit events no rule can still count and expired idempotency keys. */
export const sweepRunOnce = (services: Services): { rateEventsPruned: number; idempotencyRecordsSwept: number } => ({
  rateEventsPruned: services.rateLimiter.prune(LONGEST_RATE_WINDOW_MS),
  idempotencyRecordsSwept: services.sending.sweepIdempotency(),
});
