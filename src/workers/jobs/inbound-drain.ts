import { setTimeout as sleep } from 'node:timers/promises';
import type { Logger } from '../../core/logger.js';
import type { InboundService } from '../../services/mail/inbound.js';
import type { QueuedInbound } from '../../store/inbound-queue.js';
import { SteppedJob } from './kicked-job.js';

/** Queued messages delivered per commit once the burst has paused: about what 16 busy sessions commit at once, so one commit holds the event loop a few milliseconds, not tens. */
const BATCH = 16;
/** While mail keeps queueing, a batch this small at most every TRICKLE_MS, so the MX's sessions keep the main thread. */
const TRICKLE_BATCH = 4;
const TRICKLE_MS = 50;
/** Mail queued within this long means the burst goes on. */
const BURST_GAP_MS = 100;

/**
 * Delivers the mail the MX queued during a burst (src/services/mail/inbound.ts) into its
 * mailboxes, oldest first, one batch at a time: a trickle while messages keep queueing (the
 * burst has the main thread: accepting mail comes first, filing it second, as an MTA's
 * smtpd and its delivery agents), then in full batches once it pauses. Kicked by each queue
 * commit (`queued`), at start and every second (a message postponed after a failure).
 */
export class InboundDrain extends SteppedJob {
  private lastQueuedAt = Number.NEGATIVE_INFINITY;

  constructor(
    private readonly inbound: InboundService,
    private readonly logger: Logger,
  ) {
    super(0);
  }

  /** A message was queued: the burst goes on. */
  queued(): void {
    this.lastQueuedAt = performance.now();
    this.kick();
  }

  /**
   * Batch after batch until none is due. A postponed message lies below `after`: the next run
   * sees it again, once due. With nothing queued (the per-second kick, most seconds) no query.
   */
  protected async runAll(): Promise<void> {
    for (let after = 0; !this.stopping && this.inbound.queuedCount() > 0; ) {
      const bursting = performance.now() - this.lastQueuedAt < BURST_GAP_MS;
      const entries = this.inbound.dueQueued(after, bursting ? TRICKLE_BATCH : BATCH);
      if (entries.length === 0) return;
      after = entries[entries.length - 1].id;
      const started = performance.now();
      await this.deliver(entries);
      if (bursting) await sleep(Math.max(0, TRICKLE_MS - (performance.now() - started)));
    }
  }

  private async deliver(entries: readonly QueuedInbound[]): Promise<void> {
    try {
      for (const { id, error } of await this.inbound.deliverQueued(entries)) {
        this.logger.warn('queued inbound message not delivered; tried again later', {
          queueId: id,
          error: error instanceof Error ? error.message : String(error),
        });
      }
    } catch (error) {
      this.logger.error('delivering queued inbound mail failed', { error: error instanceof Error ? error.message : String(error) });
    }
  }
}
