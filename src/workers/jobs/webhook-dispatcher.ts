import type { Clock } from '../../core/clock.js';
import type { Logger } from '../../core/logger.js';
import type { WebhookDispatchService } from '../../services/webhooks/dispatch.js';

/** How long a kick waits for more mail to share its run; far below the contract's latency. */
const KICK_DELAY_MS = 10;

export interface DispatcherOptions {
  /** Attempts in flight at once, across all endpoints. */
  concurrency: number;
  /** Told of each attempt's outcome (metrics). */
  onAttempt?: (ok: boolean) => void;
}

/**
 * Webhook dispatch as a worker: ingest outbox rows into events, then start every due
 * attempt. node-cron runs it every second for retries; main.ts also kicks it right after
 * an outbox write commits, so a new message is sent within milliseconds, not at the
 * next tick. Attempts in flight are tracked so no event is attempted twice at once.
 */
export class WebhookDispatcher {
  private readonly inFlight = new Map<number, Promise<void>>();
  /** Ingests queued in the group commit, which stop() lets finish before the store closes. */
  private readonly ingesting = new Set<Promise<void>>();
  private readonly shutdown = new AbortController();
  private kickPending = false;
  /** Attempts started by each path: a kick after a commit, the per-second tick, or runOnce. */
  readonly started = { kick: 0, tick: 0, runOnce: 0 };

  constructor(
    private readonly dispatch: WebhookDispatchService,
    private readonly clock: Clock,
    private readonly logger: Logger,
    private readonly options: DispatcherOptions,
  ) {}

  /**
   * Runs start() soon, after the current (synchronous) transaction has committed. Kicks
   * within KICK_DELAY_MS share one run: under an SMTP burst, a run per group-commit batch
   * (1 to 2 ms apart) spent about 3% of the ingest CPU reading an outbox of a few rows.
   */
  kick(): void {
    if (this.kickPending || this.shutdown.signal.aborted) return;
    this.kickPending = true;
    setTimeout(() => {
      this.kickPending = false;
      void this.startSafely(this.clock.now(), 'kick');
    }, KICK_DELAY_MS);
  }

  /** Ingests, then starts due attempts without waiting for them; resolves to how many it started. */
  async start(now: Date, source: keyof WebhookDispatcher['started'] = 'tick'): Promise<number> {
    if (this.shutdown.signal.aborted) return 0;
    const ingest = this.dispatch.ingest(now.getTime());
    this.ingesting.add(ingest);
    try {
      await ingest;
    } finally {
      this.ingesting.delete(ingest);
    }
    if (this.shutdown.signal.aborted) return 0;
    const free = this.options.concurrency - this.inFlight.size;
    if (free <= 0) return 0;
    const due = this.dispatch
      .due(now.getTime(), free + this.inFlight.size)
      .filter((event) => !this.inFlight.has(event.seq))
      .slice(0, free);
    for (const event of due) {
      const attempt = this.dispatch
        .attemptScheduled(event, this.shutdown.signal)
        .then(
          (outcome) => {
            if (outcome) this.options.onAttempt?.(outcome.ok);
          },
          (error: unknown) => this.logger.error('webhook attempt failed to run', { event: event.id, error: describe(error) }),
        )
        .finally(() => {
          this.inFlight.delete(event.seq);
          this.kick();
        });
      this.inFlight.set(event.seq, attempt);
    }
    this.started[source] += due.length;
    return due.length;
  }

  /**
   * start() until nothing is due at `now` and nothing is in flight: what tests call with a
   * ManualClock's time. Over the concurrency limit it starts the rest as slots free up.
   */
  async runOnce(now: Date): Promise<{ started: number }> {
    let started = 0;
    for (;;) {
      const count = await this.start(now, 'runOnce');
      started += count;
      if (count === 0 && this.inFlight.size === 0) return { started };
      await this.settled();
    }
  }

  /** Aborts attempts in flight (they are not recorded and stay due) and waits for them to settle. */
  async stop(): Promise<void> {
    this.shutdown.abort();
    await Promise.allSettled([...this.ingesting]);
    await this.settled();
  }

  private async settled(): Promise<void> {
    while (this.inFlight.size > 0) await Promise.all([...this.inFlight.values()]);
  }

  private async startSafely(now: Date, source: keyof WebhookDispatcher['started']): Promise<void> {
    try {
      await this.start(now, source);
    } catch (error) {
      this.logger.error('webhook dispatch failed', { error: describe(error) });
    }
  }
}

const describe = (error: unknown): string => (error instanceof Error ? error.message : String(error));
