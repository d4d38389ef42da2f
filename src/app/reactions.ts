import { INBOUND_QUEUED, JUNK_JUDGED, MESSAGE_STORED, OUTBOUND_RECIPIENT_UPDATED, type OutboundRecipientUpdatedEvent } from '../core/events.js';
import { EventStreamService } from '../services/events/streams.js';
import { METRIC_TOPICS, type MetricsService } from '../services/health/metrics.js';
import { MailboxWatchers } from '../services/mail/watchers.js';
import type { Committed, CommitFeed } from '../store/index.js';
import type { Queues } from './queues.js';

/** What reacts to a commit besides the queues. */
export interface AfterCommitReactions {
  /** The inbound queue's work, told that the burst goes on. */
  noteInboundQueued: () => void;
  /** Tells whoever watches a mailbox right now (IMAP IDLE, wait_for_email). */
  watchers: MailboxWatchers;
  /** Wakes the event streams of an account an event was logged for. */
  eventStreams: EventStreamService;
  /** Notes that mail was stored or sent (src/runtime/memory-release.ts). */
  worked: () => void;
  /** Counts what committed (messages received and sent, recipient outcomes) for /metrics. */
  metrics: MetricsService;
}

/**
 * Every reaction to a commit, in one place: the store's commit feed publishes what a durable
 * transaction wrote (src/store/commit-feed.ts) and each consumer here takes the topics it
 * needs. The feed only wakes consumers; the queues read the database themselves, so a wake-up
 * lost in a crash costs nothing that the next start does not redo. Returns the unsubscribe.
 */
export const reactAfterCommit = (feed: CommitFeed, queues: Queues, reactions: AfterCommitReactions): (() => void) => {
  const { noteInboundQueued, watchers, eventStreams, worked, metrics } = reactions;
  const subscriptions = [
    feed.subscribe(MESSAGE_STORED, () => {
      queues.search.kick();
      queues.bodies.kick();
    }),
    feed.subscribe([MESSAGE_STORED, OUTBOUND_RECIPIENT_UPDATED], () => {
      queues.webhooks.kick();
      worked();
    }),
    feed.subscribe(INBOUND_QUEUED, () => {
      noteInboundQueued();
      queues.inbound.kick();
    }),
    feed.subscribe(JUNK_JUDGED, () => queues.junkTraining.kick()),
    feed.subscribe<OutboundRecipientUpdatedEvent>(OUTBOUND_RECIPIENT_UPDATED, (entries) => {
      if (leftQueued(entries)) queues.delivery.kick();
    }),
    feed.subscribe(MailboxWatchers.topics, (entries) => watchers.onCommitted(entries)),
    feed.subscribe(EventStreamService.topics, (entries) => eventStreams.onCommitted(entries)),
    feed.subscribe(METRIC_TOPICS, (entries) => metrics.onCommitted(entries)),
  ];
  return () => subscriptions.forEach((unsubscribe) => unsubscribe());
};

/**
 * True when some recipient's last state in the batch is `queued`: a remote recipient waits
 * for the delivery queue. Local recipients are queued and delivered in one transaction,
 * so they never wake it.
 */
const leftQueued = (entries: readonly Committed<OutboundRecipientUpdatedEvent>[]): boolean => {
  const last = new Map<string, string>();
  for (const { payload } of entries) last.set(`${payload.submissionId} ${payload.recipient}`, payload.status);
  return [...last.values()].includes('queued');
};
