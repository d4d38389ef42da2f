import { AppError } from '../../core/errors.js';
import type { Clock } from '../../core/clock.js';
import { startOfDay } from '../../core/time-zone.js';
import type { Principal } from '../../core/types.js';
import type { AccessPolicy } from '../../store/access-keys.js';
import type { Store } from '../../store/index.js';
import type { AccessKeySendPolicy, SendAddresses } from './access-key-send-policy.js';
import { requirePermission } from '../access/auth.js';

export interface KeyUsage {
  dailyRecipientsUsed: number;
  totalRecipientsUsed: number;
}

/** What GET /balance adds for a limited key (docs/design.md "limited key policy in balance"). */
export interface AccessKeyBalance extends KeyUsage {
  id: string;
  name: string;
  permissions: string[];
  expiresAt: string | null;
  allowedSenders: string[] | null;
  allowedRecipients: string[] | null;
  dailyRecipientLimit: number | null;
  totalRecipientLimit: number | null;
}

const DAY_PLUS_MS = 36 * 60 * 60 * 1000;

/**
 * A limited key's sending policy: exact address lists and recipient budgets. Budgets are
 * not counters: a unit is a recipient row of this key whose credit is reserved and not
 * refunded (the send path's rows), so a unit is taken and released in the very
 * transaction that reserves or refunds the credit.
 */
export class AccessKeyPolicyService implements AccessKeySendPolicy {
  constructor(
    private readonly store: Store,
    private readonly clock: Clock,
    private readonly timeZone: string,
  ) {}

  /**
   * The send seam, part 1 (before anything is charged): the key may send and every address
   * is on its lists. A full key (or an owner approving) passes. 403 otherwise.
   */
  async checkAddresses(principal: Principal, addresses: SendAddresses): Promise<void> {
    if (principal.kind !== 'access') return;
    requirePermission(principal, 'mail:send');
    const policy = await this.policy(principal);
    const outside = (list: string[] | null, candidates: readonly string[]) =>
      list === null ? [] : candidates.filter((address) => !list.includes(normalize(address)));
    const badSenders = outside(policy.allowedSenders, [addresses.from, ...addresses.replyTo]);
    if (badSenders.length > 0) {
      throw new AppError('forbidden', `this key may not send as ${badSenders.join(', ')} (from and replyTo must be in allowedSenders)`, { field: 'from' });
    }
    const badRecipients = outside(policy.allowedRecipients, addresses.recipients);
    if (badRecipients.length > 0) {
      throw new AppError('forbidden', `this key may not send to ${badRecipients.join(', ')} (not in allowedRecipients)`, { field: 'to' });
    }
  }

  /**
   * The send seam, part 2: call inside the accept transaction, before inserting the
   * recipient rows that reserve `units` credits. Daily budget exceeded: 429 with
   * Retry-After until local midnight; total budget exceeded: 403 (it never resets).
   */
  async reserveUnits(principal: Principal, units: number): Promise<void> {
    if (principal.kind !== 'access' || units === 0) return;
    const policy = await this.policy(principal);
    const now = this.clock.now().getTime();
    const usage = await this.usage(policy.keyId, now);
    const total = policy.totalRecipientLimit ?? 0;
    const daily = policy.dailyRecipientLimit ?? 0;
    if (usage.totalRecipientsUsed + units > total) {
      throw new AppError(
        'forbidden',
        `this key's total budget allows ${Math.max(0, total - usage.totalRecipientsUsed)} more recipients of ${total}; it never resets`,
      );
    }
    if (usage.dailyRecipientsUsed + units > daily) {
      const nextDay = startOfDay(this.timeZone, startOfDay(this.timeZone, now) + DAY_PLUS_MS);
      throw new AppError(
        'rate_limited',
        `this key's daily budget allows ${Math.max(0, daily - usage.dailyRecipientsUsed)} more recipients today (of ${daily})`,
        {
          retryAfterSeconds: Math.max(1, Math.ceil((nextDay - now) / 1000)),
        },
      );
    }
  }

  async usage(keyId: string, now: number): Promise<KeyUsage> {
    return {
      dailyRecipientsUsed: await this.store.submissions.countKeyUnitsSince(keyId, startOfDay(this.timeZone, now)),
      totalRecipientsUsed: await this.store.accessKeys.totalUnitsHeld(keyId),
    };
  }

  /** The policy and usage a limited key sees in GET /balance; null for a full key. */
  async balanceOf(principal: Principal): Promise<AccessKeyBalance | null> {
    if (principal.kind !== 'access') return null;
    const key = await this.store.keys.byId(principal.keyId);
    const policy = await this.policy(principal);
    const usage = await this.usage(policy.keyId, this.clock.now().getTime());
    return {
      id: policy.keyId,
      name: policy.name,
      permissions: policy.permissions,
      expiresAt: key?.expiresAt ? new Date(key.expiresAt).toISOString() : null,
      allowedSenders: policy.allowedSenders,
      allowedRecipients: policy.allowedRecipients,
      dailyRecipientLimit: policy.dailyRecipientLimit,
      dailyRecipientsUsed: usage.dailyRecipientsUsed,
      totalRecipientLimit: policy.totalRecipientLimit,
      totalRecipientsUsed: usage.totalRecipientsUsed,
    };
  }

  private async policy(principal: Principal): Promise<AccessPolicy> {
    const policy = await this.store.accessKeys.policy(principal.keyId);
    if (!policy) throw new AppError('forbidden', 'this key has no policy');
    return policy;
  }
}

const normalize = (address: string): string => address.trim().toLowerCase();
