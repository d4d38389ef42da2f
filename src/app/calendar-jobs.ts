import type { Config } from '../config/types.js';
import type { Logger } from '../core/logger.js';
import type { RecheckSummary } from '../services/domains/verification.js';
import type { Services } from '../services/index.js';
import type { CalendarJob } from '../runtime/calendar.js';

/** The longest window any rate rule counts over (registrations: one hour). */
const LONGEST_RATE_WINDOW_MS = 24 * 60 * 60 * 1000;

/**
 * Housekeeping: drops rate-limit events no rule can still count, expired idempotency keys,
 * webhook history past 30 days, owner sessions, links and claim codes long over, and the
 * mail of deleted domain mailboxes whose retention has passed, and large values written for
 * commits that never came (src/store/large-values.ts).
 */
export const sweepRunOnce = async (services: Services) => ({
  rateEventsPruned: await services.rateLimiter.prune(LONGEST_RATE_WINDOW_MS),
  idempotencyRecordsSwept: await services.sending.sweepIdempotency(),
  webhookEventsPruned: await services.webhookDispatch.prune(),
  ownerRecordsSwept: await services.ownerSessions.sweep(),
  deletedMailboxesPurged: await services.domainMailboxes.purgeDue(),
  stagedValuesSwept: await services.mailbox.staging.sweep(),
});

/**
 * Marks prepared replacement keys that passed their 30 minutes `expired` (docs/agents/keys.md);
 * the original stays the only key. Authentication already refuses them by time, so this keeps
 * the stored state honest for GET /keys and the admin views.
 */
export const keyExpiryRunOnce = async (services: Services): Promise<{ replacementsExpired: number }> => ({
  replacementsExpired: await services.keyRotation.expireReplacements(),
});

/**
 * The daily DNS re-check of every custom domain (`domains.recheckSchedule`): records that
 * changed since the last check are seen, and a domain whose ownership record is gone stops
 * taking new addresses (the list and the console say why).
 */
export const domainRecheckRunOnce = async (services: Services, logger: Logger): Promise<RecheckSummary> => {
  const summary = await services.domainVerification.recheckAll();
  if (summary.checked > 0) logger.info('domains re-checked', { ...summary });
  return summary;
};

/**
 * Reads the transfers to every Polygon invoice address still watched and settles them
 * (docs/operators/payments.md): a paid invoice is applied without anyone calling its status.
 * An RPC failure leaves the invoice as it was for the next run.
 */
export const polygonWatcherRunOnce = async (services: Services, logger: Logger): Promise<{ checked: number; failed: number }> => {
  const result = await services.payments.watchPolygon();
  if (result.failed > 0) logger.warn('polygon watcher: invoices not checked', result);
  return result;
};

/** The calendar's jobs for this configuration; `worked` is told of a sweep (its deletes read many pages). */
export const calendarJobs = (services: Services, config: Config, logger: Logger, worked: () => void): CalendarJob[] => [
  {
    name: 'sweep',
    schedule: '0 */10 * * * *',
    run: async () => {
      worked();
      return await sweepRunOnce(services);
    },
  },
  { name: 'key-expiry', schedule: '30 * * * * *', run: () => keyExpiryRunOnce(services) },
  { name: 'domain-recheck', schedule: config.domains.recheckSchedule, run: () => domainRecheckRunOnce(services, logger) },
  ...(config.payments.polygon.rpcUrl && config.payments.polygon.xpub
    ? [{ name: 'polygon-watcher', schedule: config.payments.polygon.watchSchedule, run: () => polygonWatcherRunOnce(services, logger) }]
    : []),
];
