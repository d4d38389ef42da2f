import type { Logger } from '../../core/logger.js';
import type { MessageBodyService } from '../../services/mail/bodies.js';
import { SteppedJob } from './kicked-job.js';

/** Bodies built per batch; the run goes on while any are left. */
const BATCH = 100;
/** Mail composed here is stored without its body; a second later it gets one. */
export const BACKFILL_DELAY_MS = 1_000;

/**
 * Builds the stored bodies of messages that have none (src/services/mail/bodies.ts): at
 * start (mail stored before bodies existed) and after mail is stored without one. One run
 * at a time; a read that needs a body meanwhile builds it itself.
 */
export class BodyBackfill extends SteppedJob {
  constructor(
    private readonly bodies: MessageBodyService,
    private readonly logger: Logger,
    delayMs = BACKFILL_DELAY_MS,
  ) {
    super(delayMs);
  }

  protected async runAll(): Promise<void> {
    try {
      let built = 0;
      // Until none is left, or a batch made no progress (those stay listed for the next start).
      for (let batch = -1; batch !== 0 && !this.stopping && this.bodies.hasBackfill(); ) {
        batch = await this.bodies.backfill(BATCH, () => this.stopping);
        built += batch;
      }
      if (built > 0) this.logger.info('stored bodies built for earlier mail', { messages: built });
    } catch (error) {
      this.logger.error('building stored bodies failed', { error: error instanceof Error ? error.message : String(error) });
    }
  }
}
