import type { Clock } from '../../core/clock.js';
import type { Logger } from '../../core/logger.js';
import { signedHeaders, type AttemptOutcome, type WebhookLimits, type WebhookSender } from '../../core/webhooks.js';
import type { Store } from '../../store/index.js';
import type { EventProgress, WebhookEventRecord } from '../../store/webhook-events.js';
import type { WebhookEndpointRecord } from '../../store/webhooks.js';
import type { NodeClaims } from '../cluster/claims.js';
import { pauseIfBaselineBroken } from './inbox-identity.js';

/**
 * Performs webhook attempts of the events the event log wrote (src/services/webhooks/event-log.ts)
 * and records their outcomes.
 */
export class WebhookDispatchService {
  constructor(
    private readonly store: Store,
    private readonly clock: Clock,
    private readonly sender: WebhookSender,
    private readonly logger: Logger,
    private readonly limits: Pick<WebhookLimits, 'retryMs' | 'historyMs'>,
    private readonly claims: NodeClaims,
  ) {}

  /**
   * Leases up to `limit` due events to this node, leaving out those it has in flight: no other
   * node attempts them while the lease is renewed (docs/design.md, "Several processes on one store").
   */
  async leaseDue(now: number, limit: number, inFlight: readonly number[]): Promise<WebhookEventRecord[]> {
    if (!(await this.store.webhookEvents.anyDue(now, inFlight))) return [];
    const leased = await this.store.groupCommit(() => this.store.webhookEvents.leaseDue(now, limit, inFlight, this.claims.nodeId, this.claims.leaseUntil(now)));
    this.claims.hold(
      'webhooks',
      leased.map((event) => event.seq),
    );
    return leased;
  }

  /** When the next attempt of an event not `inFlight` and not leased by another node is due, or null. */
  async nextDueAt(inFlight: readonly number[], now: number = this.clock.now().getTime()): Promise<number | null> {
    return await this.store.webhookEvents.nextDueAt(inFlight, now);
  }

  /**
   * One scheduled attempt of a pending event this node leased; the outcome decides the next one
   * (docs/design.md "webhook retry schedule"). An attempt not made or not recorded gives the
   * lease up, so the event is due again at once.
   */
  async attemptScheduled(event: WebhookEventRecord, signal?: AbortSignal): Promise<AttemptOutcome | null> {
    let outcome: AttemptOutcome | null = null;
    try {
      const endpoint = await this.store.webhookEndpoints.byId(event.endpointId);
      if (endpoint?.status !== 'verified' || endpoint.signingSecret === null) return null;
      if (await pauseIfBaselineBroken(this.store, endpoint)) return null;
      outcome = await this.perform(event, endpoint, 0, signal, this.claims.nodeId);
      return outcome;
    } finally {
      this.claims.release('webhooks', [event.seq]);
      if (outcome === null) await this.store.transaction(() => this.store.webhookEvents.releaseLease(event.seq, this.claims.nodeId));
    }
  }

  /**
   * Signs and sends the stored body, then records the attempt. An attempt cut short by
   * shutdown is not recorded: the event stays due and is sent again after a restart. A
   * scheduled attempt names the node holding the event's lease (`leasedBy`): if the lease ran
   * out meanwhile and another node took the event over, this attempt is not recorded (the event
   * was delivered at least once; the other node's attempt is the one recorded).
   */
  async perform(
    event: WebhookEventRecord,
    endpoint: WebhookEndpointRecord,
    replay: number,
    signal?: AbortSignal,
    leasedBy: string | null = null,
  ): Promise<AttemptOutcome | null> {
    const startedAt = this.clock.now();
    const headers = signedHeaders(endpoint.signingSecret ?? '', event.id, startedAt, event.body);
    const started = performance.now();
    const outcome = await this.sender.send({ url: endpoint.url, body: event.body, headers }, signal);
    if (signal?.aborted) return null;
    const durationMs = Math.round(performance.now() - started);
    await this.store.groupCommit(async () => {
      const current = await this.store.webhookEvents.bySeq(event.seq);
      if (!current) return;
      await this.store.webhookEvents.recordAttempt(
        event.seq,
        {
          replay,
          at: startedAt.getTime(),
          durationMs,
          httpStatus: outcome.httpStatus ?? null,
          error: outcome.ok ? null : (outcome.error ?? 'failed'),
        },
        progressAfter(current, outcome, replay, this.limits.retryMs),
        leasedBy,
      );
    });
    if (!outcome.ok) this.logger.debug('webhook attempt failed', { event: event.id, error: outcome.error });
    return outcome;
  }

  /** Delivery history is kept 30 days (`limits.webhookHistoryDays`, docs/agents/webhooks.md). */
  async prune(now = this.clock.now().getTime()): Promise<number> {
    return await this.store.transaction(() => this.store.webhookEvents.pruneBefore(now - this.limits.historyMs));
  }
}

/**
 * Attempt n of the schedule happens retryMs[n-1] after the event; after the last (by default
 * the 8th) failure the event is failed. A replay is one attempt whose result is the new status. An
 * event cancelled while its attempt was in flight stays cancelled unless that attempt succeeded.
 */
const progressAfter = (event: WebhookEventRecord, outcome: AttemptOutcome, replay: number, retryMs: readonly number[]): EventProgress => {
  if (outcome.ok) return { status: 'delivered', nextAttemptAt: null };
  if (replay > 0) return { status: 'failed', nextAttemptAt: null };
  if (event.status !== 'pending') return { status: event.status, nextAttemptAt: null };
  const attemptsMade = event.attempts + 1;
  if (attemptsMade >= retryMs.length) return { status: 'failed', nextAttemptAt: null };
  return { status: 'pending', nextAttemptAt: event.createdAt + retryMs[attemptsMade] };
};
