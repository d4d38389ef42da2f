import type { Services } from '../../services/index.js';

/** The longest window any rate rule counts over (registrations: one hour). */
const LONGEST_RATE_WINDOW_MS = 24 * 60 * 60 * 1000;

/**
 * Housekeeping: drops rate-limit events no rule can still count, expired idempotency keys,
 * webhook history past 30 days, owner sessions, links and claim codes long over, and the
 * mail of deleted domain mailboxes whose retention has passed.
 */
export const sweepRunOnce = (
  services: Services,
): { rateEventsPruned: number; idempotencyRecordsSwept: number; webhookEventsPruned: number; ownerRecordsSwept: number; deletedMailboxesPurged: number } => ({
  rateEventsPruned: services.rateLimiter.prune(LONGEST_RATE_WINDOW_MS),
  idempotencyRecordsSwept: services.sending.sweepIdempotency(),
  webhookEventsPruned: services.webhookDispatch.prune(),
  ownerRecordsSwept: services.ownerSessions.sweep(),
  deletedMailboxesPurged: services.domainMailboxes.purgeDue(),
});
