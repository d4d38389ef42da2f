import type { Logger } from '../../core/logger.js';
import type { MessageBodyService } from '../../services/mail/bodies.js';

/** Bodies built per run; the run goes on while any are left. */
const BATCH = 100;
/** Mail composed here is stored without its body; a second later it gets one. */
export const BACKFILL_DELAY_MS = 1_000;

/**
 * Builds the stored bodies of messages that have none (src/services/mail/bodies.ts): at
 * start (mail stored before bodies existed) and after mail is stored without one. One run
 * at a time; a read that needs a body meanwhile builds it itself.
 */
export class BodyBackfill {
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<void> | null = null;
  private stopped = false;

  constructor(
    private readonly bodies: MessageBodyService,
    private readonly logger: Logger,
    private readonly delayMs = BACKFILL_DELAY_MS,
  ) {}

  kick(): void {
    if (this.stopped || this.timer !== null || this.running !== null) return;
    this.timer = setTimeout(() => {
      this.timer = null;
      this.running = this.runAll().finally(() => {
        this.running = null;
      });
    }, this.delayMs);
  }

  /** Stops kicks and waits for a run in progress, so the store can close after it. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
    await this.running;
  }

  /** Resolves when no run is in progress or due (tests). */
  async idle(): Promise<void> {
    while (this.timer !== null || this.running !== null) {
      await (this.running ?? new Promise((resolve) => setTimeout(resolve, this.delayMs)));
    }
  }

  private async runAll(): Promise<void> {
    try {
      let built = 0;
      // Until none is left, or a batch made no progress (those stay listed for the next start).
      for (let batch = -1; batch !== 0 && !this.stopped && this.bodies.hasBackfill();) {
        batch = await this.bodies.backfill(BATCH);
        built += batch;
      }
      if (built > 0) this.logger.info('stored bodies built for earlier mail', { messages: built });
    } catch (error) {
      this.logger.error('building stored bodies failed', { error: error instanceof Error ? error.message : String(error) });
    }
  }
}
