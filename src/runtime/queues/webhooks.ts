import type { Logger } from '../../core/logger.js';
import type { WebhookDispatchService } from '../../services/webhooks/dispatch.js';
import type { QueueRun, QueueWork } from '../queue-runner.js';

export interface WebhookRun extends QueueRun {
  /** Attempts this run started (they go on after it). */
  started: number;
}

export interface WebhookQueueOptions {
  /** Attempts in flight at once, across all endpoints. */
  concurrency: number;
  /** Told of each attempt's outcome (metrics). */
  onAttempt?: (ok: boolean) => void;
  /** An attempt ended: a slot is free (the runner's kick). */
  onSettled: () => void;
}

/**
 * Webhook dispatch as a queue: a run starts every due attempt of the events the event log
 * wrote (src/services/webhooks/event-log.ts) that has a free slot, without waiting for them. An attempt's end kicks the queue
 * (its slot is free); a retry's time is the run's next due time. Attempts in flight are held
 * here and each event is leased to this node in the store, so no event is attempted twice at
 * once, by this process or another (docs/design.md, "Several processes on one store").
 */
export class WebhookQueue implements QueueWork<WebhookRun> {
  private readonly inFlight = new Map<number, Promise<void>>();

  constructor(
    private readonly dispatch: WebhookDispatchService,
    private readonly logger: Logger,
    private readonly options: WebhookQueueOptions,
  ) {}

  async run(now: number, signal: AbortSignal): Promise<WebhookRun> {
    if (signal.aborted) return { started: 0, next: null };
    const free = this.options.concurrency - this.inFlight.size;
    // A full set of slots: the first attempt to end kicks the next run.
    if (free <= 0) return { started: 0, next: null };
    // Leased to this node before they are attempted: no other node attempts them meanwhile.
    const due = await this.dispatch.leaseDue(now, free, [...this.inFlight.keys()]);
    for (const event of due) this.inFlight.set(event.seq, this.attempt(event, signal));
    return { started: due.length, next: this.inFlight.size >= this.options.concurrency ? null : await this.dispatch.nextDueAt([...this.inFlight.keys()], now) };
  }

  /** Resolves once no attempt is in flight (at stop, after the abort; tests). */
  async settle(): Promise<void> {
    while (this.inFlight.size > 0) await Promise.all([...this.inFlight.values()]);
  }

  private attempt(event: Parameters<WebhookDispatchService['attemptScheduled']>[0], signal: AbortSignal): Promise<void> {
    return this.dispatch
      .attemptScheduled(event, signal)
      .then(
        (outcome) => {
          if (outcome) this.options.onAttempt?.(outcome.ok);
        },
        (error: unknown) =>
          this.logger.error('webhook attempt failed to run', { event: event.id, error: error instanceof Error ? error.message : String(error) }),
      )
      .finally(() => {
        this.inFlight.delete(event.seq);
        this.options.onSettled();
      });
  }
}
