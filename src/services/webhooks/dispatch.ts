import type { Clock } from '../../core/clock.js';
import {
  EVENT_LOGGED,
  MESSAGE_STORED,
  OUTBOUND_RECIPIENT_UPDATED,
  type EventLoggedNotice,
  type MessageStoredEvent,
  type OutboundRecipientUpdatedEvent,
} from '../../core/events.js';
import { newUuid } from '../../core/ids.js';
import type { Logger } from '../../core/logger.js';
import {
  MESSAGE_DELIVERY_UPDATED,
  MESSAGE_RECEIVED,
  signedHeaders,
  type AttemptOutcome,
  type SubscribableEvent,
  type WebhookEnvelope,
  type WebhookLimits,
  type WebhookSender,
} from '../../core/webhooks.js';
import type { Store } from '../../store/index.js';
import type { OutboxEntry } from '../../store/outbox.js';
import type { EventProgress, WebhookEventRecord } from '../../store/webhook-events.js';
import type { InboxBaseline, WebhookEndpointRecord } from '../../store/webhooks.js';
import { INBOX } from '../mail/mailbox.js';
import { currentInbox, pauseIfBaselineBroken } from './inbox-identity.js';

/** Outbox rows read per ingest transaction. */
const INGEST_BATCH = 500;
/** The name of this consumer's outbox cursors. */
const CONSUMER = 'webhooks';
/** Outbox rows this consumer has read are kept this long (a record for debugging), then pruned. */
const OUTBOX_KEEP_MS = 60 * 60 * 1000;

/** Per-batch lookups, so a burst for one account reads its endpoint and INBOX once. */
class IngestContext {
  private readonly endpoints = new Map<string, WebhookEndpointRecord | null>();
  private readonly inboxes = new Map<string, InboxBaseline | null>();

  constructor(private readonly store: Store) {}

  endpointOf(accountId: string): WebhookEndpointRecord | null {
    if (!this.endpoints.has(accountId)) this.endpoints.set(accountId, this.store.webhookEndpoints.currentOfAccount(accountId));
    return this.endpoints.get(accountId) ?? null;
  }

  inboxOf(accountId: string): InboxBaseline | null {
    if (!this.inboxes.has(accountId)) this.inboxes.set(accountId, currentInbox(this.store, accountId));
    return this.inboxes.get(accountId) ?? null;
  }
}

/**
 * Turns outbox rows into webhook events and performs attempts. Ingest is durable: the
 * events are created and the read cursor advanced in one transaction, so a crash between
 * the two loses nothing and duplicates nothing (docs/design.md rule 6).
 */
export class WebhookDispatchService {
  constructor(
    private readonly store: Store,
    private readonly clock: Clock,
    private readonly sender: WebhookSender,
    private readonly logger: Logger,
    private readonly limits: Pick<WebhookLimits, 'retryMs' | 'historyMs'>,
  ) {}

  /**
   * Turns every outbox row this consumer has not read into events. Each batch is a job of
   * the shared group commit, so it rides in the transaction (and the disk sync) of mail
   * being stored instead of paying for a commit of its own per stored message.
   */
  async ingest(now: number): Promise<void> {
    while (await this.store.groupCommit(() => this.ingestBatch(now))) {
      /* until the outbox is drained */
    }
  }

  /**
   * Reads one batch of each topic the webhooks consume and advances this consumer's cursor
   * in the same transaction as the events it creates; returns true when a full batch
   * suggests more remain.
   */
  private ingestBatch(now: number): boolean {
    const context = new IngestContext(this.store);
    const handlers: [string, (row: OutboxEntry) => void][] = [
      [MESSAGE_STORED, (row) => this.ingestMessageStored(row, context, now)],
      [OUTBOUND_RECIPIENT_UPDATED, (row) => this.ingestRecipientUpdated(row, context, now)],
    ];
    let more = false;
    for (const [topic, handle] of handlers) {
      const rows = this.store.outbox.after(topic, this.store.outboxCursors.position(CONSUMER, topic), INGEST_BATCH);
      for (const row of rows) handle(row);
      if (rows.length > 0) this.store.outboxCursors.advance(CONSUMER, topic, rows[rows.length - 1].id);
      more ||= rows.length === INGEST_BATCH;
    }
    return more;
  }

  /**
   * Contract Events 5: only INBOX is observed and there is no backfill. Every INBOX message
   * is logged for the account (the event stream); the webhook takes it when its UID is above
   * the baseline recorded at verification, whatever stored it.
   */
  private ingestMessageStored(row: OutboxEntry, context: IngestContext, now: number): void {
    const stored = row.payload as MessageStoredEvent;
    if (stored.folder !== INBOX) return;
    const endpoint = this.endpointTaking(context, stored.accountId, MESSAGE_RECEIVED);
    const inbox = context.inboxOf(stored.accountId);
    // A row from an INBOX generation that no longer exists names no message.
    if (stored.mailboxId !== inbox?.mailboxId || stored.uidValidity !== inbox.uidValidity) return;
    const taken = endpoint !== null && Number(stored.uid) > (endpoint.baselineUid ?? Number.MAX_SAFE_INTEGER);
    this.addEvent(
      stored.accountId,
      taken ? endpoint : null,
      MESSAGE_RECEIVED,
      stored.storedAt,
      { folder: INBOX, uidValidity: stored.uidValidity, uid: stored.uid },
      now,
    );
  }

  /**
   * Contract Events: message.delivery_updated goes to endpoints that opted in (and to event
   * streams that ask for it). data is the recipient outcome: submissionId (the id POST send
   * answered), recipient, status, and the remote server's codes when there are any.
   */
  private ingestRecipientUpdated(row: OutboxEntry, context: IngestContext, now: number): void {
    const update = row.payload as OutboundRecipientUpdatedEvent;
    const endpoint = this.endpointTaking(context, update.accountId, MESSAGE_DELIVERY_UPDATED);
    // Like INBOX's baseline: outcomes from before the verification are not sent.
    const taken = endpoint !== null && update.at >= (endpoint.verifiedAt ?? Number.MAX_SAFE_INTEGER);
    const { accountId: _account, at: _at, ...data } = update;
    this.addEvent(update.accountId, taken ? endpoint : null, MESSAGE_DELIVERY_UPDATED, update.at, data, now);
  }

  /** The account's endpoint when it is verified, subscribed to `type`, and its INBOX baseline still holds. */
  private endpointTaking(context: IngestContext, accountId: string, type: SubscribableEvent): WebhookEndpointRecord | null {
    const endpoint = context.endpointOf(accountId);
    if (endpoint?.status !== 'verified' || !endpoint.events.includes(type)) return null;
    return pauseIfBaselineBroken(this.store, endpoint, context.inboxOf(accountId)) ? null : endpoint;
  }

  /** Logs the event for the account, for the endpoint when one takes it, and tells the event streams after the commit. */
  private addEvent(
    accountId: string,
    endpoint: WebhookEndpointRecord | null,
    type: WebhookEnvelope['type'],
    observedAt: number,
    data: Record<string, unknown>,
    now: number,
  ): void {
    const envelope: WebhookEnvelope = { id: newUuid(), type, createdAt: new Date(observedAt).toISOString(), data };
    const seq = this.store.webhookEvents.insert({
      id: envelope.id,
      accountId,
      endpointId: endpoint?.id ?? null,
      type,
      body: JSON.stringify(envelope),
      createdAt: now,
    });
    const logged: EventLoggedNotice = { accountId, seq };
    this.store.notice(EVENT_LOGGED, logged);
  }

  due(now: number, limit: number): WebhookEventRecord[] {
    return this.store.webhookEvents.due(now, limit);
  }

  /** When the next attempt of an event not `inFlight` is due, or null when none is pending. */
  nextDueAt(inFlight: readonly number[]): number | null {
    return this.store.webhookEvents.nextDueAt(inFlight);
  }

  /** One scheduled attempt of a pending event; the outcome decides the next one (docs/design.md "webhook retry schedule"). */
  async attemptScheduled(event: WebhookEventRecord, signal?: AbortSignal): Promise<AttemptOutcome | null> {
    const endpoint = this.store.webhookEndpoints.byId(event.endpointId);
    if (endpoint?.status !== 'verified' || endpoint.signingSecret === null) return null;
    if (pauseIfBaselineBroken(this.store, endpoint)) return null;
    return this.perform(event, endpoint, 0, signal);
  }

  /**
   * Signs and sends the stored body, then records the attempt. An attempt cut short by
   * shutdown is not recorded: the event stays due and is sent again after a restart.
   */
  async perform(event: WebhookEventRecord, endpoint: WebhookEndpointRecord, replay: number, signal?: AbortSignal): Promise<AttemptOutcome | null> {
    const startedAt = this.clock.now();
    const headers = signedHeaders(endpoint.signingSecret ?? '', event.id, startedAt, event.body);
    const started = performance.now();
    const outcome = await this.sender.send({ url: endpoint.url, body: event.body, headers }, signal);
    if (signal?.aborted) return null;
    const durationMs = Math.round(performance.now() - started);
    await this.store.groupCommit(() => {
      const current = this.store.webhookEvents.bySeq(event.seq);
      if (!current) return;
      this.store.webhookEvents.recordAttempt(
        event.seq,
        {
          replay,
          at: startedAt.getTime(),
          durationMs,
          httpStatus: outcome.httpStatus ?? null,
          error: outcome.ok ? null : (outcome.error ?? 'failed'),
        },
        progressAfter(current, outcome, replay, this.limits.retryMs),
      );
    });
    if (!outcome.ok) this.logger.debug('webhook attempt failed', { event: event.id, error: outcome.error });
    return outcome;
  }

  /** Contract: delivery history is kept 30 days (`limits.webhookHistoryDays`). Also drops outbox rows read over an hour ago. */
  prune(now = this.clock.now().getTime()): number {
    return this.store.transaction(() => {
      this.store.outboxCursors.pruneConsumed(now - OUTBOX_KEEP_MS);
      return this.store.webhookEvents.pruneBefore(now - this.limits.historyMs);
    });
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
