import { INBOUND_QUEUED, MESSAGE_STORED, OUTBOUND_RECIPIENT_UPDATED, type OutboundRecipientUpdatedEvent } from '../core/events.js';
import { EventStreamService } from '../services/events/streams.js';
import { METRIC_TOPICS, type MetricsService } from '../services/health/metrics.js';
import { MailboxWatchers } from '../services/mail/watchers.js';
import type { Committed, CommitFeed } from '../store/index.js';

/** What reacts to a commit; each is optional so admin commands and tests wire only some. */
export interface AfterCommitReactions {
  /** Moves stored mail into the full-text index (src/workers/jobs/search-indexer.ts). */
  indexSearch?: () => void;
  /** Builds the stored bodies of mail stored without one (src/workers/jobs/body-backfill.ts). */
  buildBodies?: () => void;
  /** Turns outbox rows into webhook events and sends them (src/workers/jobs/webhook-dispatcher.ts). */
  dispatchWebhooks?: () => void;
  /** Delivers mail the MX queued during a burst into its mailboxes (src/workers/jobs/inbound-drain.ts). */
  drainInbound?: () => void;
  /** Hands queued remote recipients to the next mail server (src/workers/jobs/delivery.ts). */
  deliver?: () => void;
  /** Tells whoever watches a mailbox right now (IMAP IDLE, wait_for_email). */
  watchers?: MailboxWatchers;
  /** Wakes the event streams of an account an event was logged for. */
  eventStreams?: EventStreamService;
  /** Notes that mail was stored or sent, for releaseWhenQuiet (src/workers/memory-release.ts). */
  worked?: () => void;
  /** Counts what committed (messages received and sent, recipient outcomes) for /metrics. */
  metrics?: MetricsService;
}

/**
 * Every reaction to a commit, in one place: the store's commit feed publishes what a durable
 * transaction wrote (src/store/commit-feed.ts) and each consumer here takes the topics it
 * needs. The feed only wakes consumers; those that must not miss a change (webhooks, the
 * index, delivery) read the database themselves, so a wake-up lost in a crash costs nothing
 * that the next start does not redo. Returns the unsubscribe for shutdown.
 */
export const reactAfterCommit = (feed: CommitFeed, reactions: AfterCommitReactions): (() => void) => {
  const { indexSearch, buildBodies, dispatchWebhooks, drainInbound, deliver, watchers, eventStreams, worked, metrics } = reactions;
  const subscriptions = [
    indexSearch && feed.subscribe(MESSAGE_STORED, () => indexSearch()),
    buildBodies && feed.subscribe(MESSAGE_STORED, () => buildBodies()),
    dispatchWebhooks && feed.subscribe([MESSAGE_STORED, OUTBOUND_RECIPIENT_UPDATED], () => dispatchWebhooks()),
    drainInbound && feed.subscribe(INBOUND_QUEUED, () => drainInbound()),
    deliver &&
      feed.subscribe<OutboundRecipientUpdatedEvent>(OUTBOUND_RECIPIENT_UPDATED, (entries) => {
        if (leftQueued(entries)) deliver();
      }),
    watchers && feed.subscribe(MailboxWatchers.topics, (entries) => watchers.onCommitted(entries)),
    eventStreams && feed.subscribe(EventStreamService.topics, (entries) => eventStreams.onCommitted(entries)),
    worked && feed.subscribe([MESSAGE_STORED, OUTBOUND_RECIPIENT_UPDATED], () => worked()),
    metrics && feed.subscribe(METRIC_TOPICS, (entries) => metrics.onCommitted(entries)),
  ];
  return () => subscriptions.forEach((unsubscribe) => unsubscribe?.());
};

/**
 * True when some recipient's last state in the batch is `queued`: a remote recipient waits
 * for the delivery worker. Local recipients are queued and delivered in one transaction,
 * so they never wake it.
 */
const leftQueued = (entries: readonly Committed<OutboundRecipientUpdatedEvent>[]): boolean => {
  const last = new Map<string, string>();
  for (const { payload } of entries) last.set(`${payload.submissionId} ${payload.recipient}`, payload.status);
  return [...last.values()].includes('queued');
};
