import type { Principal } from '../../core/types.js';
import type { AccessKeyBalance, AccessKeyPolicyService } from '../keys/access-key-policy.js';
import { balanceOf, type AccountService, type Balance } from './accounts.js';

export interface KeyBalance extends Balance {
  /** Only for a limited key: its own policy and usage (docs/agents/keys.md). */
  accessKey?: AccessKeyBalance;
}

/** GET /balance and the check_balance tool: the account's balance, plus the policy of a limited key. */
export class BalanceService {
  constructor(
    private readonly accounts: AccountService,
    private readonly policy: AccessKeyPolicyService,
  ) {}

  async of(principal: Principal): Promise<KeyBalance> {
    const balance: KeyBalance = balanceOf(await this.accounts.get(principal.accountId));
    const accessKey = await this.policy.balanceOf(principal);
    if (accessKey) balance.accessKey = accessKey;
    return balance;
  }
}
