import { AppError } from '../../core/errors.js';
import type { Clock } from '../../core/clock.js';
import type { Store } from '../../store/index.js';

export interface RateRule {
  /** A stable name for what is counted, e.g. "register". */
  bucket: string;
  limit: number;
  windowMs: number;
  /** The text of the 429 answer. */
  message: string;
}

/**
 * Sliding-window limits counted in the database, so a restart does not reset them.
 * `take` must run inside the transaction of the work it guards when that work can fail.
 */
export class RateLimiter {
  constructor(
    private readonly store: Store,
    private readonly clock: Clock,
  ) {}

  async take(rule: RateRule, subject: string, count = 1): Promise<void> {
    const now = this.clock.now().getTime();
    // Counted, not listed: the accept transaction of every send runs this, and a list of a
    // busy window's events cost more than the rest of the send.
    await this.store.transaction(async () => {
      // An event exactly windowMs old has left the window, so Retry-After (freeAt) is exact.
      const since = now - rule.windowMs + 1;
      const inWindow = await this.store.rateLimits.countSince(rule.bucket, subject, since);
      if (inWindow + count > rule.limit) {
        const oldestToLeave = await this.store.rateLimits.timeAt(rule.bucket, subject, since, Math.max(0, inWindow + count - rule.limit - 1));
        const freeAt = (oldestToLeave ?? now) + rule.windowMs;
        throw new AppError('rate_limited', rule.message, { retryAfterSeconds: Math.max(1, Math.ceil((freeAt - now) / 1000)) });
      }
      for (let i = 0; i < count; i += 1) await this.store.rateLimits.record(rule.bucket, subject, now);
    });
  }

  /** Removes events older than the longest window any rule uses. */
  async prune(maxWindowMs: number): Promise<number> {
    return await this.store.rateLimits.pruneBefore(this.clock.now().getTime() - maxWindowMs);
  }
}
