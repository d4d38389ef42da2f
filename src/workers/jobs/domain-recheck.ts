import type { Logger } from '../../core/logger.js';
import type { RecheckSummary } from '../../services/domains/verification.js';
import type { Services } from '../../services/index.js';

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
