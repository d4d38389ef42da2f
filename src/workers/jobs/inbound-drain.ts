import type { Logger } from '../../core/logger.js';
import type { InboundService } from '../../services/mail/inbound.js';

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
export class InboundDrain {
  private running: Promise<void> | null = null;
  private timer: NodeJS.Timeout | null = null;
  /** The highest queue id handed out; rows at or below it are delivered or postponed. */
  private cursor = 0;
  private lastQueuedAt = Number.NEGATIVE_INFINITY;
  private lastBatchAt = Number.NEGATIVE_INFINITY;
  private stopped = false;

  constructor(
    private readonly inbound: InboundService,
    private readonly logger: Logger,
  ) {}

  /** A message was queued: the burst goes on. */
  queued(): void {
    this.lastQueuedAt = performance.now();
    this.kick();
  }

  kick(): void {
    if (this.stopped || this.running !== null || this.timer !== null) return;
    const now = performance.now();
    const bursting = now - this.lastQueuedAt < BURST_GAP_MS;
    const wait = bursting ? this.lastBatchAt + TRICKLE_MS - now : 0;
    if (wait > 0) {
      this.timer = setTimeout(() => {
        this.timer = null;
        this.kick();
      }, wait);
      return;
    }
    const entries = this.inbound.dueQueued(this.cursor, bursting ? TRICKLE_BATCH : BATCH);
    if (entries.length === 0) {
      // Postponed rows lie below the cursor: the next kick looks again from the start.
      this.cursor = 0;
      return;
    }
    this.cursor = entries[entries.length - 1].id;
    this.lastBatchAt = now;
    this.running = this.deliver(entries).finally(() => {
      this.running = null;
      this.kick();
    });
  }

  private async deliver(entries: Parameters<InboundService['deliverQueued']>[0]): Promise<void> {
    try {
      const { failed } = await this.inbound.deliverQueued(entries);
      for (const { id, error } of failed) {
        this.logger.warn('queued inbound message not delivered; tried again later', {
          queueId: id,
          error: error instanceof Error ? error.message : String(error),
        });
      }
    } catch (error) {
      this.logger.error('delivering queued inbound mail failed', { error: error instanceof Error ? error.message : String(error) });
    }
  }

  /** Stops handing out messages and waits for the batch in progress; the rest stay queued for the next start. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
    await this.running;
  }

  /** Resolves when no batch is in progress or due (tests). */
  async idle(): Promise<void> {
    while (this.running !== null || this.timer !== null) await (this.running ?? new Promise((resolve) => setTimeout(resolve, TRICKLE_MS)));
  }
}
