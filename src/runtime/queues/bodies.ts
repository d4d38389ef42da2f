import type { Logger } from '../../core/logger.js';
import type { MessageBodyService } from '../../services/mail/bodies.js';
import type { QueueRun, QueueWork } from '../queue-runner.js';

/** Bodies built per batch; the run goes on while any are left. */
const BATCH = 100;
/** Mail composed here is stored without its body; a second later (the queue's kick delay) it gets one. */
export const BACKFILL_DELAY_MS = 1_000;

export interface BodyBackfillRun extends QueueRun {
  built: number;
}

/**
 * Builds the stored bodies of messages that have none (src/services/mail/bodies.ts): at start
 * (mail stored before bodies existed) and after mail is stored without one. A read that needs
 * a body meanwhile builds it itself.
 */
export const bodyBackfillQueue = (bodies: MessageBodyService, logger: Logger): QueueWork<BodyBackfillRun> => ({
  async run(_now, signal) {
    let built = 0;
    try {
      // Until none is left, or a batch made no progress (those stay listed for the next start).
      for (let batch = -1; batch !== 0 && !signal.aborted && (await bodies.hasBackfill()); ) {
        batch = await bodies.backfill(BATCH, () => signal.aborted);
        built += batch;
      }
      if (built > 0) logger.info('stored bodies built for earlier mail', { messages: built });
    } catch (error) {
      logger.error('building stored bodies failed', { error: error instanceof Error ? error.message : String(error) });
    }
    return { built, next: null };
  },
});
