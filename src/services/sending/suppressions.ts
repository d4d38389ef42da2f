import { isValidAddress, normalizeAddress } from '../../core/addresses.js';
import type { Clock } from '../../core/clock.js';
import { AppError, invalidInput } from '../../core/errors.js';
import { newUuid } from '../../core/ids.js';
import type { Principal, SuppressionReason } from '../../core/types.js';
import type { Store } from '../../store/index.js';
import type { SuppressionRecord } from '../../store/suppressions.js';
import { requireFullKey } from '../access/auth.js';
import type { RateLimiter } from '../access/rate-limiter.js';
import type { SendingReputation } from '../delivery/reputation.js';

/** How many are listed and released per hour (config `limits.suppressionsListed`, `limits.suppressionReleasesPerHour`). */
export interface SuppressionLimits {
  listed: number;
  releasesPerHour: number;
}
const HOUR_MS = 60 * 60 * 1000;
const REASONS: readonly SuppressionReason[] = ['bounce', 'complaint', 'manual'];

export interface SuppressionView {
  id: string;
  address: string;
  reason: SuppressionReason;
  canRelease: boolean;
  createdAt: string;
}

export interface SuppressionList {
  suppressions: SuppressionView[];
}

export interface SuppressionRelease {
  success: true;
  id: string;
  address: string;
  released: true;
}

const view = (record: SuppressionRecord): SuppressionView => ({
  id: record.id,
  address: record.address,
  reason: record.reason,
  canRelease: record.canRelease,
  createdAt: new Date(record.createdAt).toISOString(),
});

/**
 * Recipient suppressions (docs/design.md "suppression reasons"): bounce (5.1.1, releasable),
 * complaint (not releasable: an administrator must verify renewed consent), manual.
 */
export class SuppressionService {
  constructor(
    private readonly store: Store,
    private readonly clock: Clock,
    private readonly rateLimiter: RateLimiter,
    private readonly reputation: SendingReputation,
    private readonly limits: SuppressionLimits,
  ) {}

  /**
   * Full key only: suppressions are account-wide, and a `mail:send` key may only send and read
   * its own delivery receipts (docs/operators/delivery.md, Suppressions).
   */
  async list(principal: Principal): Promise<SuppressionList> {
    requireFullKey(principal);
    return { suppressions: (await this.store.suppressions.listActive(principal.accountId, this.limits.listed)).map(view) };
  }

  /** Future sends to the address are allowed again; credits unchanged; nothing is resent. */
  async release(principal: Principal, id: string): Promise<SuppressionRelease> {
    requireFullKey(principal);
    return await this.store.transaction(async () => {
      const record = await this.store.suppressions.byId(principal.accountId, id);
      if (!record || record.releasedAt !== null) throw new AppError('not_found', 'no active suppression with this id');
      if (!record.canRelease) {
        throw new AppError('forbidden', 'a complaint suppression cannot be released here; an administrator must verify renewed consent');
      }
      await this.rateLimiter.take(
        {
          bucket: 'suppression-release',
          limit: this.limits.releasesPerHour,
          windowMs: HOUR_MS,
          message: `at most ${this.limits.releasesPerHour} suppression releases per hour`,
        },
        principal.accountId,
      );
      await this.store.suppressions.release(record.id, this.clock.now().getTime());
      return { success: true, id: record.id, address: record.address, released: true };
    });
  }

  /**
   * Operator command `agentpost suppressions add <email> <address> <reason>`: for a
   * complaint the operator verified by other means than a feedback-loop report (those
   * arrive through BounceService, see complaints.ts). Re-checks the sending state.
   */
  async add(accountEmail: string, addressInput: string, reasonInput: string): Promise<SuppressionView> {
    const reason = reasonInput as SuppressionReason;
    if (!REASONS.includes(reason)) throw invalidInput('reason', `reason must be one of ${REASONS.join(', ')}`);
    const address = normalizeAddress(addressInput);
    if (!isValidAddress(address)) throw invalidInput('address', `"${addressInput}" is not a valid address`);
    const account = await this.store.accounts.byEmail(normalizeAddress(accountEmail));
    if (!account) throw new AppError('not_found', `no account with the address ${accountEmail}`);
    return await this.store.transaction(async () => {
      const record = { id: newUuid(), accountId: account.id, address, reason, canRelease: reason !== 'complaint', createdAt: this.clock.now().getTime() };
      if (!(await this.store.suppressions.add(record))) throw new AppError('conflict', `${address} is already suppressed for this account`);
      if (reason === 'complaint') await this.reputation.check(account.id);
      return view({ ...record, releasedAt: null });
    });
  }
}
