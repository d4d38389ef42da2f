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
import { MESSAGE_DELIVERY_UPDATED, MESSAGE_RECEIVED, type SubscribableEvent, type WebhookEnvelope } from '../../core/webhooks.js';
import type { Committed, Store } from '../../store/index.js';
import type { InboxBaseline, WebhookEndpointRecord } from '../../store/webhooks.js';
import { INBOX } from '../mail/mailbox.js';
import { currentInbox, pauseIfBaselineBroken } from './inbox-identity.js';

/** The changes the event log records. */
export const LOGGED_TOPICS = [MESSAGE_STORED, OUTBOUND_RECIPIENT_UPDATED] as const;

/** Per-transaction lookups, so a burst for one account reads its endpoint and INBOX once. */
class LogContext {
  private readonly endpoints = new Map<string, WebhookEndpointRecord | null>();
  private readonly inboxes = new Map<string, InboxBaseline | null>();

  constructor(private readonly store: Store) {}

  async endpointOf(accountId: string): Promise<WebhookEndpointRecord | null> {
    if (!this.endpoints.has(accountId)) this.endpoints.set(accountId, await this.store.webhookEndpoints.currentOfAccount(accountId));
    return this.endpoints.get(accountId) ?? null;
  }

  async inboxOf(accountId: string): Promise<InboxBaseline | null> {
    if (!this.inboxes.has(accountId)) this.inboxes.set(accountId, await currentInbox(this.store, accountId));
    return this.inboxes.get(accountId) ?? null;
  }
}

/**
 * The account's event log (the event streams read it) and its webhook's events (the webhook
 * queue sends them), written inside the transaction of the change they describe, just before
 * its commit (the commit feed's beforeCommit hook): a message stored and its event, a
 * recipient's outcome and its event, commit together or not at all, and nothing is read back
 * to make them. Each event is told to the event streams after the commit (EVENT_LOGGED).
 */
export class EventLog {
  constructor(
    private readonly store: Store,
    private readonly clock: Clock,
  ) {}

  /** Hooks the log into every transaction of the store. */
  attach(): () => void {
    return this.store.feed.beforeCommit(LOGGED_TOPICS, (entries) => this.log(entries));
  }

  /** Inside the transaction: one event per change, in the order staged. */
  async log(entries: readonly Committed[]): Promise<void> {
    const context = new LogContext(this.store);
    const now = this.clock.now().getTime();
    for (const entry of entries) {
      if (entry.topic === MESSAGE_STORED) await this.messageStored(entry.payload as MessageStoredEvent, context, now);
      else await this.recipientUpdated(entry.payload as OutboundRecipientUpdatedEvent, context, now);
    }
  }

  /**
   * docs/agents/webhooks.md (Events, Baseline): only INBOX is observed and there is no
   * backfill. Every INBOX message is logged for the account (the event stream); the webhook
   * takes it when its UID is above the baseline recorded at verification, whatever stored it.
   * Received mail the junk filter filed in Junk instead of INBOX is reported too, from Junk with
   * `junk: true` (docs/agents/junk.md): to the webhook when it arrived after the verification,
   * unless the endpoint asked to skip junk.
   */
  private async messageStored(stored: MessageStoredEvent, context: LogContext, now: number): Promise<void> {
    if (stored.folder !== INBOX && !stored.junk) return;
    const endpoint = await this.endpointTaking(context, stored.accountId, MESSAGE_RECEIVED);
    const inbox = await context.inboxOf(stored.accountId);
    // A change from a mailbox (or an INBOX generation) that no longer exists names no message.
    if (stored.mailboxId !== inbox?.mailboxId || (!stored.junk && stored.uidValidity !== inbox.uidValidity)) return;
    const baseline = endpoint?.baselineUid ?? Number.MAX_SAFE_INTEGER;
    const taken = endpoint !== null && (stored.junk ? takesJunk(endpoint, stored) : Number(stored.uid) > baseline);
    const data = { folder: stored.folder, uidValidity: stored.uidValidity, uid: stored.uid, junk: stored.junk === true };
    await this.add(stored.accountId, taken ? endpoint : null, MESSAGE_RECEIVED, stored.storedAt, data, now);
  }

  /**
   * message.delivery_updated (docs/agents/webhooks.md) goes to endpoints that opted in and to
   * event streams that ask for it; data is the recipient outcome: submissionId (the id POST
   * send answered), recipient, status, and the remote server's codes when there are any.
   */
  private async recipientUpdated(update: OutboundRecipientUpdatedEvent, context: LogContext, now: number): Promise<void> {
    const endpoint = await this.endpointTaking(context, update.accountId, MESSAGE_DELIVERY_UPDATED);
    // Like INBOX's baseline: outcomes from before the verification are not sent.
    const taken = endpoint !== null && update.at >= (endpoint.verifiedAt ?? Number.MAX_SAFE_INTEGER);
    const { accountId: _account, at: _at, ...data } = update;
    await this.add(update.accountId, taken ? endpoint : null, MESSAGE_DELIVERY_UPDATED, update.at, data, now);
  }

  /** The account's endpoint when it is verified, subscribed to `type`, and its INBOX baseline still holds. */
  private async endpointTaking(context: LogContext, accountId: string, type: SubscribableEvent): Promise<WebhookEndpointRecord | null> {
    const endpoint = await context.endpointOf(accountId);
    if (endpoint?.status !== 'verified' || !endpoint.events.includes(type)) return null;
    return (await pauseIfBaselineBroken(this.store, endpoint, await context.inboxOf(accountId))) ? null : endpoint;
  }

  /** Logs the event for the account, for the endpoint when one takes it, and tells the event streams after the commit. */
  private async add(
    accountId: string,
    endpoint: WebhookEndpointRecord | null,
    type: WebhookEnvelope['type'],
    observedAt: number,
    data: Record<string, unknown>,
    now: number,
  ): Promise<void> {
    const envelope: WebhookEnvelope = { id: newUuid(), type, createdAt: new Date(observedAt).toISOString(), data };
    const seq = await this.store.webhookEvents.insert({
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

  /**
   * Changes an earlier version left in the outbox table unread (it logged them after the
   * commit, from that table): logged once, at start, and the table emptied.
   */
  async drainLegacyOutbox(): Promise<number> {
    if (!(await this.store.legacyOutbox.hasRows())) return 0;
    return await this.store.transaction(async () => {
      const unread = (await this.store.legacyOutbox.unread()).filter((entry) => (LOGGED_TOPICS as readonly string[]).includes(entry.topic));
      await this.log(unread);
      await this.store.legacyOutbox.clear();
      return unread.length;
    });
  }
}

/** Junk has no baseline of its own (a UID in Junk says nothing of INBOX's): mail that arrived after the verification counts. */
const takesJunk = (endpoint: WebhookEndpointRecord, stored: MessageStoredEvent): boolean =>
  !endpoint.skipJunk && stored.storedAt >= (endpoint.verifiedAt ?? Number.MAX_SAFE_INTEGER);
