import { newMailboxAddress, newOwnerAddress } from '../../core/addresses.js';
import { AppError } from '../../core/errors.js';
import type { Clock } from '../../core/clock.js';
import { newUuid } from '../../core/ids.js';
import { hashKey, newFullKey } from '../../core/keys.js';
import type { Account, AccountKind } from '../../core/types.js';
import type { Store } from '../../store/index.js';
import type { MailboxService } from '../mail/mailbox.js';
import type { RateLimiter } from '../access/rate-limiter.js';

export interface RegisterInput {
  agentId: string;
  name?: string;
}

export interface Registration {
  success: true;
  userId: string;
  email: string;
  apiKey: string;
  credits: number;
  mailboxReady: true;
  message: string;
}

export interface AccountsConfig {
  mailDomain: string;
  registrationsPerIpPerHour: number;
}

const HOUR_MS = 60 * 60 * 1000;

export class AccountService {
  constructor(
    private readonly store: Store,
    private readonly clock: Clock,
    private readonly rateLimiter: RateLimiter,
    private readonly mailboxes: MailboxService,
    private readonly config: AccountsConfig,
  ) {}

  /**
   * One call creates the account, its mailbox and its key; 5 requests per IP per hour
   * (`limits.registrationsPerIpPerHour`, docs/agents/rest.md). The request is counted first, in a
   * transaction of its own, so a request that then fails (malformed, too large, or anything else)
   * still counts, as a successful one does.
   */
  async register(input: RegisterInput, clientIp: string): Promise<Registration> {
    await this.countRequest(clientIp);
    return await this.registered(input);
  }

  /**
   * What the adapters call as soon as a registration request reaches them: counted before the
   * body is read or validated (`read` throws for a body too large or malformed), then created.
   */
  async registerFrom(clientIp: string, read: () => RegisterInput | Promise<RegisterInput>): Promise<Registration> {
    await this.countRequest(clientIp);
    return await this.registered(await read());
  }

  private async countRequest(clientIp: string): Promise<void> {
    await this.rateLimiter.take(
      {
        bucket: 'register',
        limit: this.config.registrationsPerIpPerHour,
        windowMs: HOUR_MS,
        message: 'too many registration requests from this address; try again later',
      },
      clientIp,
    );
  }

  private async registered(input: RegisterInput): Promise<Registration> {
    const apiKey = newFullKey();
    const account = await this.store.transaction(() => this.createAccount(input, apiKey));
    return {
      success: true,
      userId: account.id,
      email: account.email,
      apiKey,
      credits: account.credits,
      mailboxReady: true,
      message: 'Store the apiKey now: it is shown only once.',
    };
  }

  /**
   * A domain mailbox (docs/design.md "Domain holder"): an agent account like a registered one, on
   * an address the caller checked is free, with its own full key. Runs in the caller's transaction.
   */
  async createOnAddress(agentId: string, address: string): Promise<{ account: Account; apiKey: string }> {
    const apiKey = newFullKey();
    return { account: await this.createAccount({ agentId }, apiKey, address), apiKey };
  }

  private async createAccount(input: RegisterInput, apiKey: string, address?: string): Promise<Account> {
    const email = address ?? (await this.freeAddress(() => newMailboxAddress(input.agentId, this.config.mailDomain)));
    const account = await this.insertAccount('agent', input.agentId, input.name ?? null, email);
    await this.store.keys.insert({
      id: newUuid(),
      accountId: account.id,
      kind: 'full',
      keyHash: hashKey(apiKey),
      status: 'active',
      createdAt: account.createdAt,
      expiresAt: null,
      revokedAt: null,
    });
    return account;
  }

  /**
   * A human owner's account and mailbox (docs/design.md "Owners"): no API key, since a human signs
   * in with a password; the caller's transaction adds the sign-in. agentId holds the login email.
   */
  async createHuman(loginEmail: string): Promise<Account> {
    return await this.insertAccount('human', loginEmail, null, await this.freeAddress(() => newOwnerAddress(loginEmail, this.config.mailDomain)));
  }

  private async insertAccount(kind: AccountKind, agentId: string, name: string | null, email: string): Promise<Account> {
    const account: Account = {
      id: newUuid(),
      agentId,
      name,
      email,
      credits: 0,
      status: 'active',
      sendingState: 'probation',
      createdAt: this.clock.now().getTime(),
      kind,
      ownerId: null,
    };
    await this.store.accounts.insert(account);
    await this.mailboxes.createMailbox(account.id, account.email);
    return account;
  }

  /** The random suffix makes a clash unlikely; a clash is retried, never reused. */
  private async freeAddress(candidate: () => string): Promise<string> {
    for (let attempt = 0; attempt < 5; attempt += 1) {
      const address = candidate();
      if (!(await this.store.accounts.addressTaken(address))) return address;
    }
    throw new AppError('unavailable', 'could not allocate a mailbox address; try again');
  }

  async get(accountId: string): Promise<Account> {
    const account = await this.store.accounts.byId(accountId);
    if (!account) throw new AppError('not_found', 'account not found');
    return account;
  }

  async byEmail(email: string): Promise<Account> {
    const account = await this.store.accounts.byEmail(email.trim().toLowerCase());
    if (!account) throw new AppError('not_found', `no account with the address ${email}`);
    return account;
  }

  async list(): Promise<Account[]> {
    return await this.store.accounts.list();
  }

  /** Operator grant (`agentpost credits add`); returns the new balance. */
  async addCredits(email: string, amount: number): Promise<number> {
    if (!Number.isSafeInteger(amount) || amount <= 0) {
      throw new AppError('invalid_input', 'credits to add must be a positive whole number');
    }
    const account = await this.byEmail(email);
    return await this.store.transaction(async () => (await this.store.accounts.addCredits(account.id, amount)) as number);
  }
}

export interface Balance {
  credits: number;
  email: string;
  accountStatus: Account['status'];
}

export const balanceOf = (account: Account): Balance => ({
  credits: account.credits,
  email: account.email,
  accountStatus: account.status,
});
