import { setTimeout as sleep } from 'node:timers/promises';
import type { Logger } from '../../core/logger.js';
import type { InboundService } from '../../services/mail/inbound.js';
import type { QueuedInbound } from '../../store/inbound-queue.js';
import type { QueueRun, QueueWork } from '../queue-runner.js';

/** Queued messages delivered per commit once the burst has paused: about what 16 busy sessions commit at once, so one commit holds the event loop a few milliseconds, not tens. */
const BATCH = 16;
/** While mail keeps queueing, a batch this small at most every TRICKLE_MS, so the MX's sessions keep the main thread. */
const TRICKLE_BATCH = 4;
const TRICKLE_MS = 50;
/** A run that could store nothing and could not postpone it either waits this long. */
const FAILED_RUN_PAUSE_MS = 1_000;
/** Mail queued within this long means the burst goes on. */
const BURST_GAP_MS = 100;
/**
 * Batches in flight at once once the burst has paused: one commits while the next is parsed
 * and checked, so the main thread and the parse worker work at the same time instead of
 * waiting for each other (bench:ingest's burst part).
 */
const IN_FLIGHT = 2;

export interface InboundRun extends QueueRun {
  /** Messages stored into their mailboxes by this run. */
  delivered: number;
}

/**
 * Delivers the mail the MX queued during a burst (src/services/mail/inbound.ts) into its
 * mailboxes, oldest first, one batch at a time: a trickle while messages keep queueing (the
 * burst has the main thread: accepting mail comes first, filing it second, as an MTA's
 * smtpd and its delivery agents), then in full batches once it pauses. Kicked by each queue
 * commit (`noteQueued`); woken at a postponed message's due time.
 */
export class InboundQueue implements QueueWork<InboundRun> {
  private lastQueuedAt = Number.NEGATIVE_INFINITY;

  constructor(
    private readonly inbound: InboundService,
    private readonly logger: Logger,
  ) {}

  /** A message was queued: the burst goes on. */
  noteQueued(): void {
    this.lastQueuedAt = performance.now();
  }

  /**
   * Batch after batch until none is due; a postponed message lies below `after` and waits for
   * its time. Once the burst pauses, the next batch is claimed and prepared while the one
   * before it commits (IN_FLIGHT); each batch commits after the one before it, so mail is
   * stored in the order it was queued.
   */
  async run(now: number, signal: AbortSignal): Promise<InboundRun> {
    let delivered = 0;
    let tried = 0;
    const inFlight: Promise<void>[] = [];
    let previous: Promise<void> = Promise.resolve();
    // Counted again from the table: other processes on the data folder queue (and store) too.
    await this.inbound.recountQueued();
    for (let after = 0; !signal.aborted && this.inbound.queuedCount() > 0; ) {
      const bursting = performance.now() - this.lastQueuedAt < BURST_GAP_MS;
      if (inFlight.length >= (bursting ? 1 : IN_FLIGHT)) await inFlight.shift();
      // Claimed before the parse: no other process stores the same message.
      const entries = await this.inbound.claimQueued(after, bursting ? TRICKLE_BATCH : BATCH);
      if (entries.length === 0) break;
      after = entries[entries.length - 1].id;
      const started = performance.now();
      tried += entries.length;
      const batch = this.deliver(entries, previous).then((failed) => {
        delivered += entries.length - failed;
      });
      previous = batch;
      inFlight.push(batch);
      if (bursting) {
        await inFlight.shift();
        await sleep(Math.max(0, TRICKLE_MS - (performance.now() - started)));
      }
    }
    await Promise.all(inFlight);
    const next = await this.inbound.nextQueuedDueAt();
    // Nothing stored and still due (not even postponed: the store failed): not again at once.
    if (tried > 0 && delivered === 0 && next !== null && next <= now) return { delivered, next: now + FAILED_RUN_PAUSE_MS };
    return { delivered, next };
  }

  /** Returns how many were not stored (postponed); never rejects. The commit waits for `previous`. */
  private async deliver(entries: readonly QueuedInbound[], previous: Promise<void>): Promise<number> {
    try {
      const failed = await this.inbound.deliverQueued(entries, previous);
      for (const { id, error } of failed) {
        this.logger.warn('queued inbound message not delivered; tried again later', {
          queueId: id,
          error: error instanceof Error ? error.message : String(error),
        });
      }
      return failed.length;
    } catch (error) {
      this.logger.error('delivering queued inbound mail failed', { error: error instanceof Error ? error.message : String(error) });
      return entries.length;
    }
  }
}
