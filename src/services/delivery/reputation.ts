import type { Store } from '../../store/index.js';

export interface ReputationConfig {
  /** How many of the account's latest charged recipients are counted (100). */
  window: number;
  /** Pause when bounces / window passes this (0.10). */
  maxBounceRate: number;
  /** Pause when complaints / window passes this (0.005). */
  maxComplaintRate: number;
}

export const DEFAULT_REPUTATION: ReputationConfig = { window: 100, maxBounceRate: 0.1, maxComplaintRate: 0.005 };

/**
 * docs/design.md "sending state": an account pauses itself when, over its last 100 recipients,
 * failures and bounces pass 10% or complaints pass 0.5%. The denominator is the whole window
 * even while the account has sent fewer, so one early bounce does not pause a new sender.
 */
export class SendingReputation {
  constructor(
    private readonly store: Store,
    private readonly config: ReputationConfig = DEFAULT_REPUTATION,
  ) {}

  /** Run in the transaction that recorded a failure, bounce or complaint. True when it paused now. */
  async check(accountId: string): Promise<boolean> {
    const outcomes = await this.store.delivery.recentOutcomes(accountId, this.config.window);
    const tooMany =
      outcomes.bounces / this.config.window > this.config.maxBounceRate || outcomes.complaints / this.config.window > this.config.maxComplaintRate;
    if (!tooMany) return false;
    const account = await this.store.accounts.byId(accountId);
    if (!account || account.sendingState === 'paused') return false;
    return await this.store.accounts.setSendingState(accountId, 'paused');
  }
}
