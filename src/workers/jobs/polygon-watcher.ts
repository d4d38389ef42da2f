import type { Logger } from '../../core/logger.js';
import type { Services } from '../../services/index.js';

/**
 * Reads the transfers to every Polygon invoice address still watched and settles them
 * (DESIGN.md "Payment request"): a paid invoice is applied without anyone calling its status.
 * An RPC failure leaves the invoice as it was for the next run.
 */
export const polygonWatcherRunOnce = async (services: Services, logger: Logger): Promise<{ checked: number; failed: number }> => {
  const result = await services.payments.watchPolygon();
  if (result.failed > 0) logger.warn('polygon watcher: invoices not checked', result);
  return result;
};
