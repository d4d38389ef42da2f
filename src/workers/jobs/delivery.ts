import type { Clock } from '../../core/clock.js';
import type { Logger } from '../../core/logger.js';
import type { DeliveryReport, DeliveryService } from '../../services/delivery/delivery.js';

/**
 * Runs the delivery service: on its cron tick and right after a send queued remote
 * recipients (the kick). Runs never overlap, because a run's stale-claim recovery must not
 * see another run's claims in flight; a kick during a run makes one more run after it.
 */
export class DeliveryWorker {
  private chain: Promise<unknown> = Promise.resolve();
  private draining = false;
  private kickedAgain = false;
  private stopped = false;

  constructor(
    private readonly delivery: DeliveryService,
    private readonly clock: Clock,
    private readonly logger: Logger,
  ) {}

  /** One run at `now`, after any run in progress. Tests drive retries through this with a ManualClock. */
  runOnce(now: Date = this.clock.now()): Promise<DeliveryReport> {
    const run = this.chain.then(() => this.delivery.runOnce(now));
    this.chain = run.catch(() => undefined);
    return run;
  }

  /** Delivers everything due now, then stops; called by cron and after each accepted send. */
  kick(): void {
    if (this.stopped) return;
    if (this.draining) {
      this.kickedAgain = true;
      return;
    }
    this.draining = true;
    void this.drain().finally(() => {
      this.draining = false;
    });
  }

  /** Resolves when no run is in progress or queued. */
  async idle(): Promise<void> {
    while (this.draining) await this.chain;
    await this.chain;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await this.idle();
  }

  private async drain(): Promise<void> {
    do {
      this.kickedAgain = false;
      let report: DeliveryReport;
      try {
        report = await this.runOnce();
      } catch (error) {
        this.logger.error('delivery run failed', { error: error instanceof Error ? error.message : String(error) });
        return;
      }
      if (report.claimed > 0) {
        this.logger.debug('delivery run', { ...report });
        this.kickedAgain = !this.stopped;
      }
    } while (this.kickedAgain);
  }
}
