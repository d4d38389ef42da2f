import type { Logger } from '../../core/logger.js';
import type { JunkTrainingService } from '../../services/junk/training.js';
import type { QueueRun, QueueWork } from '../queue-runner.js';

/** Judgments made together (a client moving many messages to Junk) are trained in one run: the queue's kick delay. */
export const TRAIN_DELAY_MS = 100;

/**
 * Trains the junk filter on judgments (src/services/junk/training.ts): kicked when one commits,
 * and at start for those queued when the last process stopped. A REST judgment trains its own
 * before it answers; this takes the ones IMAP clients make.
 */
export const junkTrainingQueue = (training: JunkTrainingService, logger: Logger): QueueWork<QueueRun> => ({
  async run() {
    try {
      await training.catchUp();
    } catch (error) {
      logger.error('training the junk filter failed', { error: error instanceof Error ? error.message : String(error) });
    }
    return { next: null };
  },
});
