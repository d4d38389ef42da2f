import type { Logger } from '../../core/logger.js';
import type { DeliveryReport, DeliveryService } from '../../services/delivery/delivery.js';
import type { QueueRun, QueueWork } from '../queue-runner.js';

export type DeliveryRun = DeliveryReport & QueueRun;

/**
 * Outbound delivery (src/services/delivery/delivery.ts) as a queue: kicked when a send leaves
 * a remote recipient queued, and woken at the next deferred recipient's attempt. A run that
 * claimed anything runs again at once: its claim limit may have left more due.
 */
export const deliveryQueue = (delivery: DeliveryService, logger: Logger): QueueWork<DeliveryRun> => ({
  async run(now) {
    const report = await delivery.runOnce(new Date(now));
    if (report.claimed === 0) return { ...report, next: await delivery.nextDueAt() };
    logger.debug('delivery run', { ...report });
    return { ...report, next: now };
  },
});
