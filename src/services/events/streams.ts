import type { Clock } from '../../core/clock.js';
import { EVENT_LOGGED, type EventLoggedNotice } from '../../core/events.js';
import { AppError } from '../../core/errors.js';
import type { Principal } from '../../core/types.js';
import type { SubscribableEvent } from '../../core/webhooks.js';
import type { Committed, Store } from '../../store/index.js';
import type { LoggedEvent } from '../../store/webhook-events.js';
import { requirePermission } from '../access/auth.js';

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

/** One open stream: its events in order from its cursor, read from the account's event log. */
export interface EventStream {
  /** The next events after the cursor (at most `limit`); advances the cursor past them. */
  next(limit: number): LoggedEvent[];
  close(): void;
}

/**
 * Event streams for agents without a public URL (GET /api/v1/agent/events): the account's
 * event log (webhook_events, the same events and ids the webhooks get, kept limits.webhookHistoryDays, 30) read
 * from a cursor. A stream is woken by the store's after-commit hook when an event is logged
 * for its account (the EVENT_LOGGED notice), never by polling, and reads the log itself, so
 * a wake-up that comes while it is busy loses nothing.
 */
export class EventStreamService {
  private readonly openCount = new Map<string, number>();
  private readonly wakers = new Map<string, Set<() => void>>();

  /** The topics `onCommitted` reads; src/workers/after-commit.ts subscribes it. */
  static readonly topics = [EVENT_LOGGED] as const;

  constructor(
    private readonly store: Store,
    private readonly clock: Clock,
    private readonly config: EventStreamConfig,
  ) {}

  /**
   * Opens a stream (full key, or a limited key with mail:read). Without lastEventId it
   * starts after the newest logged event; with one it resumes after it, and with an id the
   * log no longer has (older than the history kept, or not this account's) from the oldest it keeps.
   */
  open(principal: Principal, options: EventStreamOptions, wake: () => void): EventStream {
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
      options.lastEventId === undefined ? this.store.webhookEvents.lastSeq(accountId) : (this.store.webhookEvents.seqOf(accountId, options.lastEventId) ?? 0);
    this.openCount.set(accountId, open + 1);
    let set = this.wakers.get(accountId);
    if (!set) this.wakers.set(accountId, (set = new Set()));
    set.add(wake);
    let closed = false;
    return {
      next: (limit) => {
        if (closed) return [];
        const since = this.clock.now().getTime() - this.config.historyMs;
        const events = this.store.webhookEvents.logAfter(accountId, cursor, options.types, since, limit);
        if (events.length > 0) cursor = events[events.length - 1].seq;
        return events;
      },
      close: () => {
        if (closed) return;
        closed = true;
        set.delete(wake);
        if (set.size === 0 && this.wakers.get(accountId) === set) this.wakers.delete(accountId);
        const left = (this.openCount.get(accountId) ?? 1) - 1;
        if (left > 0) this.openCount.set(accountId, left);
        else this.openCount.delete(accountId);
      },
    };
  }

  onCommitted(entries: readonly Committed[]): void {
    const accounts = new Set(entries.filter((entry) => entry.topic === EVENT_LOGGED).map((entry) => (entry.payload as EventLoggedNotice).accountId));
    for (const accountId of accounts) {
      for (const wake of this.wakers.get(accountId) ?? []) {
        try {
          wake();
        } catch {
          // One stream's failure is its own.
        }
      }
    }
  }
}
