import type { Clock } from '../../core/clock.js';
import { EVENT_LOGGED, KEYS_CLOSED, type EventLoggedNotice, type KeysClosedNotice } from '../../core/events.js';
import { AppError } from '../../core/errors.js';
import type { Principal } from '../../core/types.js';
import type { SubscribableEvent } from '../../core/webhooks.js';
import type { Committed, Store } from '../../store/index.js';
import type { LoggedEvent } from '../../store/webhook-events.js';
import { requirePermission, type AuthService } from '../access/auth.js';

export interface EventStreamOptions {
  /** The id of the last event the client has (the Last-Event-ID header): the stream resumes after it. */
  lastEventId?: string;
  types: readonly SubscribableEvent[];
}

export interface EventStreamConfig {
  maxStreamsPerAccount: number;
  /** Streams open at once on the whole server (each holds a connection): past it 503, as 421 past smtp.maxClients. */
  maxStreams: number;
  /** How long events are kept (webhooks' history, limits.webhookHistoryDays): a resume reaches back this far. */
  historyMs: number;
}

/** What the adapter holding a stream's connection is told. */
export interface EventStreamListener {
  /** An event was logged for the account: read `next`. */
  wake(): void;
  /** The key the stream was opened with stopped working: send `reason` as an error and close. */
  end(reason: AppError): void;
}

/** One open stream: its events in order from its cursor, read from the account's event log. */
export interface EventStream {
  /** The next events after the cursor (at most `limit`); advances the cursor past them. */
  next(limit: number): Promise<LoggedEvent[]>;
  /** Whether the key the stream was opened with still works (also checked on every KEYS_CLOSED notice). */
  keyStillValid(): Promise<boolean>;
  close(): void;
}

/** What a stream whose key stopped working is told before it closes: the 401 a new request gets. */
export const KEY_CLOSED_ERROR = new AppError('unauthorized', 'the API key of this stream was revoked, rotated away or expired');

/**
 * Event streams for agents without a public URL (GET /api/v1/agent/events): the account's
 * event log (webhook_events, the same events and ids the webhooks get, kept limits.webhookHistoryDays, 30) read
 * from a cursor. A stream is woken by the store's after-commit hook when an event is logged
 * for its account (the EVENT_LOGGED notice; for events another process logged, by
 * tellLoggedElsewhere), never by reading the log on a timer, and reads the log itself, so a
 * wake-up that comes while it is busy loses nothing.
 *
 * A stream lives no longer than its key, as an IMAP session or an SMTP submission session: when
 * keys of the account stop working (the KEYS_CLOSED notice, after the commit that revoked,
 * rotated away or expired them) each of its streams checks its own key and ends if it no
 * longer works.
 */
export class EventStreamService {
  private readonly openCount = new Map<string, number>();
  private readonly listeners = new Map<string, Set<OpenStream>>();
  /** The newest event of the log this process has looked at (tellLoggedElsewhere). */
  private seenSeq = 0;
  /** The newest event logged when this process started, read once before the first look. */
  private readonly seenSeqRead: Promise<void>;

  /** The topics `onCommitted` reads; src/app/reactions.ts subscribes it. */
  static readonly topics = [EVENT_LOGGED, KEYS_CLOSED] as const;

  constructor(
    private readonly store: Store,
    private readonly clock: Clock,
    private readonly auth: Pick<AuthService, 'stillValid'>,
    private readonly config: EventStreamConfig,
  ) {
    this.seenSeqRead = store.webhookEvents.newestSeq().then((seq) => {
      this.seenSeq = seq;
    });
  }

  /**
   * Opens a stream (full key, or a limited key with mail:read). Without lastEventId it
   * starts after the newest logged event; with one it resumes after it, and with an id the
   * log no longer has (older than the history kept, or not this account's) from the oldest it keeps.
   */
  async open(principal: Principal, options: EventStreamOptions, listener: EventStreamListener): Promise<EventStream> {
    requirePermission(principal, 'mail:read');
    const { accountId } = principal;
    const open = this.openCount.get(accountId) ?? 0;
    if (open >= this.config.maxStreamsPerAccount) {
      throw new AppError('rate_limited', `this account has ${open} event streams open, the most allowed; close one first`);
    }
    const openTotal = [...this.openCount.values()].reduce((sum, count) => sum + count, 0);
    if (openTotal >= this.config.maxStreams) {
      throw new AppError('unavailable', `the server has ${openTotal} event streams open, the most it holds; try again later or use a webhook`);
    }
    let cursor =
      options.lastEventId === undefined
        ? await this.store.webhookEvents.lastSeq(accountId)
        : ((await this.store.webhookEvents.seqOf(accountId, options.lastEventId)) ?? 0);
    this.openCount.set(accountId, open + 1);
    let set = this.listeners.get(accountId);
    if (!set) this.listeners.set(accountId, (set = new Set()));
    const entry: OpenStream = { principal, listener };
    set.add(entry);
    let closed = false;
    return {
      next: async (limit) => {
        if (closed) return [];
        const since = this.clock.now().getTime() - this.config.historyMs;
        const events = await this.store.webhookEvents.logAfter(accountId, cursor, options.types, since, limit);
        if (events.length > 0) cursor = events[events.length - 1].seq;
        return events;
      },
      keyStillValid: () => this.auth.stillValid(principal),
      close: () => {
        if (closed) return;
        closed = true;
        set.delete(entry);
        if (set.size === 0 && this.listeners.get(accountId) === set) this.listeners.delete(accountId);
        const left = (this.openCount.get(accountId) ?? 1) - 1;
        if (left > 0) this.openCount.set(accountId, left);
        else this.openCount.delete(accountId);
      },
    };
  }

  /**
   * Wakes the streams of accounts whose events another process logged (it committed since the
   * last look: src/app/foreign-commits.ts). Every writer holds SQLite's write lock from its
   * BEGIN IMMEDIATE to its commit, so sequence numbers commit in order, and a look at the
   * events above the newest one seen misses none (docs/design.md, "Several processes:
   * wake-ups and exactness").
   */
  async tellLoggedElsewhere(): Promise<void> {
    await this.seenSeqRead;
    for (const { accountId, seq } of await this.store.webhookEvents.accountsLoggedAfter(this.seenSeq)) {
      this.seenSeq = Math.max(this.seenSeq, seq);
      for (const { listener } of this.listeners.get(accountId) ?? []) isolated(() => listener.wake());
    }
  }

  async onCommitted(entries: readonly Committed[]): Promise<void> {
    const logged = new Set(entries.filter((entry) => entry.topic === EVENT_LOGGED).map((entry) => (entry.payload as EventLoggedNotice).accountId));
    const keysClosed = entries.filter((entry) => entry.topic === KEYS_CLOSED).map((entry) => (entry.payload as KeysClosedNotice).accountId);
    const checked = keysClosed.includes(null) ? [...this.listeners.keys()] : new Set(keysClosed as string[]);
    for (const accountId of checked) {
      for (const { principal, listener } of [...(this.listeners.get(accountId) ?? [])]) {
        if (!(await this.auth.stillValid(principal))) isolated(() => listener.end(KEY_CLOSED_ERROR));
      }
    }
    for (const accountId of logged) {
      for (const { listener } of this.listeners.get(accountId) ?? []) isolated(() => listener.wake());
    }
  }
}

interface OpenStream {
  principal: Principal;
  listener: EventStreamListener;
}

/** One stream's failure is its own. */
const isolated = (work: () => void): void => {
  try {
    work();
  } catch {
    // The others go on.
  }
};
