import type { Clock } from '../../core/clock.js';
import { sumInOrder } from '../../core/sequential.js';
import { startOfDay } from '../../core/time-zone.js';
import { AppError } from '../../core/errors.js';
import type { Account, SendingState } from '../../core/types.js';
import type { Store } from '../../store/index.js';
import type { RateLimiter } from '../access/rate-limiter.js';

export interface RecipientLimits {
  recipientsPerDay: number;
  recipientsPerMinute: number;
}

export interface SendingLimitsConfig {
  /** IANA zone whose midnight starts a new day (config `timeZone`). */
  timeZone: string;
  sendRequestsPerMinute: number;
  states: Record<Exclude<SendingState, 'paused'>, RecipientLimits>;
  /** A human account's daily recipients, whatever its state allows above that (`limits.humanRecipientsPerDay`). */
  humanRecipientsPerDay: number;
}

export interface SendingStatus {
  state: SendingState;
  limits: RecipientLimits & { sendRequestsPerMinute: number };
  usage: { recipientsToday: number };
  review: { status: 'none' | 'approved' | 'suspended'; reason: string | null };
  /** Present when the account is in a sender group: the cap its accounts share and what they used today. */
  shared?: SharedCap;
}

/**
 * The daily cap a sender group shares (docs/agents/sending.md, "Shared daily cap"):
 * an owner's own mailbox, the agents it claimed and the domain mailboxes it (or one of those
 * agents) made send together at most what the best of them may send alone in a day.
 */
export interface SharedCap {
  accounts: number;
  recipientsPerDay: number;
  recipientsToday: number;
}

const MINUTE_MS = 60 * 1000;
/** From one local midnight, 36 hours always land inside the next local day (DST changes are at most a few hours). */
const DAY_PLUS_MS = 36 * 60 * 60 * 1000;

interface DayBounds {
  start: number;
  end: number;
}

/** The local day containing `now` in the service time zone (config `timeZone`). */
const dayBounds = (now: number, timeZone: string): DayBounds => {
  const start = startOfDay(timeZone, now);
  return { start, end: startOfDay(timeZone, start + DAY_PLUS_MS) };
};
const PAUSED: RecipientLimits = { recipientsPerDay: 0, recipientsPerMinute: 0 };

const REVIEW: Record<SendingState, SendingStatus['review']> = {
  probation: { status: 'none', reason: 'new sender: probation limits apply until an operator raises the sending state' },
  standard: { status: 'none', reason: null },
  reviewed: { status: 'approved', reason: null },
  paused: { status: 'suspended', reason: 'sending is paused (bounce or complaint rate, or by an operator); ask the operator to review it' },
};

/**
 * The account-level limits (docs/agents/sending.md, "Sending limits"): send requests per minute, and
 * recipients per day and per minute by sending state. Counted from the recipient rows
 * themselves, so they cannot drift from what was charged.
 */
export class SendingLimits {
  /** The last local day computed: every send needs it, and Intl formatting is not cheap. */
  private day: DayBounds = { start: 0, end: 0 };

  constructor(
    private readonly store: Store,
    private readonly clock: Clock,
    private readonly rateLimiter: RateLimiter,
    private readonly config: SendingLimitsConfig,
  ) {}

  /** The sending state's limits; for a human account the day is capped at humanRecipientsPerDay (the lower applies). */
  limitsOf(account: Account): RecipientLimits {
    const state = account.sendingState === 'paused' ? PAUSED : this.config.states[account.sendingState];
    if (account.kind !== 'human') return state;
    const perDay = Math.min(state.recipientsPerDay, this.config.humanRecipientsPerDay);
    return { recipientsPerDay: perDay, recipientsPerMinute: Math.min(state.recipientsPerMinute, perDay) };
  }

  async status(account: Account): Promise<SendingStatus> {
    const now = this.clock.now().getTime();
    const today = this.dayOf(now);
    const shared = await this.sharedCap(account, today.start);
    return {
      state: account.sendingState,
      limits: { ...this.limitsOf(account), sendRequestsPerMinute: this.config.sendRequestsPerMinute },
      usage: { recipientsToday: await this.store.recipientCounts.today(account.id, today.start) },
      review: REVIEW[account.sendingState],
      ...(shared && { shared }),
    };
  }

  /**
   * The account's sender group and its shared cap, or null when the account is alone. The cap
   * is the highest daily limit of one member, so more mailboxes never add up to more mail.
   */
  private async sharedCap(account: Account, dayStart: number): Promise<SharedCap | null> {
    const group = await this.store.accounts.senderGroup(account.id);
    if (group.length <= 1) return null;
    return {
      accounts: group.length,
      recipientsPerDay: Math.max(...group.map((member) => this.limitsOf(member).recipientsPerDay)),
      recipientsToday: await sumInOrder(group, (member) => this.store.recipientCounts.today(member.id, dayStart)),
    };
  }

  /**
   * Runs inside the accept transaction: a 429 or 403 rolls back the request count too.
   * `recipients` is the number about to be charged (suppressed ones are free).
   */
  async check(account: Account, recipients: number, now: number): Promise<void> {
    if (account.sendingState === 'paused') {
      throw new AppError('forbidden', 'sending is paused for this account; ask the operator to review it');
    }
    await this.rateLimiter.take(
      {
        bucket: 'send',
        limit: this.config.sendRequestsPerMinute,
        windowMs: MINUTE_MS,
        message: `at most ${this.config.sendRequestsPerMinute} send requests a minute`,
      },
      account.id,
    );
    if (recipients === 0) return;
    const limits = this.limitsOf(account);
    await this.checkDay(account, recipients, limits.recipientsPerDay, now);
    await this.checkSharedDay(account, recipients, now);
    await this.checkMinute(account, recipients, limits.recipientsPerMinute, now);
  }

  private async checkDay(account: Account, recipients: number, perDay: number, now: number): Promise<void> {
    const today = this.dayOf(now);
    const used = await this.store.recipientCounts.today(account.id, today.start);
    if (used + recipients <= perDay) return;
    throw new AppError(
      'rate_limited',
      `daily sending limit of ${perDay} recipients (${account.sendingState}) reached: ${used} used today, ${recipients} requested`,
      { retryAfterSeconds: Math.max(1, Math.ceil((today.end - now) / 1000)) },
    );
  }

  private async checkSharedDay(account: Account, recipients: number, now: number): Promise<void> {
    const today = this.dayOf(now);
    const shared = await this.sharedCap(account, today.start);
    if (!shared || shared.recipientsToday + recipients <= shared.recipientsPerDay) return;
    throw new AppError(
      'rate_limited',
      `shared daily limit of ${shared.recipientsPerDay} recipients reached: the ${shared.accounts} accounts that share it (an owner's mailbox, its agents and its domain mailboxes) used ${shared.recipientsToday} today, ${recipients} requested`,
      { retryAfterSeconds: Math.max(1, Math.ceil((today.end - now) / 1000)) },
    );
  }

  /** The start of the day `now` falls in, in the service's time zone: the day the limits count. */
  dayStartOf(now: number): number {
    return this.dayOf(now).start;
  }

  private dayOf(now: number): DayBounds {
    if (now < this.day.start || now >= this.day.end) this.day = dayBounds(now, this.config.timeZone);
    return this.day;
  }

  /** Sliding minute: frees up when enough of the last minute's recipients age out. */
  private async checkMinute(account: Account, recipients: number, perMinute: number, now: number): Promise<void> {
    const since = now - MINUTE_MS + 1;
    // Under the limit even counting the minute's first second whole: no row read. Counted
    // exactly, and one time read, only when it may be over.
    if ((await this.store.recipientCounts.sinceAtMost(account.id, since)) + recipients <= perMinute) return;
    const inMinute = await this.store.recipientCounts.since(account.id, since);
    const excess = inMinute + recipients - perMinute;
    if (excess <= 0) return;
    const oldestToLeave = excess <= inMinute ? await this.store.submissions.recipientTimeAt(account.id, since, excess - 1) : null;
    const freeAt = oldestToLeave === null ? now + MINUTE_MS : oldestToLeave + MINUTE_MS;
    throw new AppError(
      'rate_limited',
      `at most ${perMinute} recipients a minute (${account.sendingState}); ${inMinute} in the last minute, ${recipients} requested`,
      { retryAfterSeconds: Math.max(1, Math.ceil((freeAt - now) / 1000)) },
    );
  }
}
