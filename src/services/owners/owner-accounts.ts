import { randomBytes } from 'node:crypto';
import { isValidAddress } from '../../core/addresses.js';
import type { Clock } from '../../core/clock.js';
import { AppError, invalidInput } from '../../core/errors.js';
import { sha256Hex } from '../../core/ids.js';
import type { Account } from '../../core/types.js';
import type { Store } from '../../store/index.js';
import type { AccountService } from '../accounts/accounts.js';
import type { TwoFactorResult, TwoFactorService } from '../access/two-factor.js';
import type { RateLimiter } from '../access/rate-limiter.js';
import { checkPasswordPolicy, type Passwords } from './passwords.js';
import { normalizeLogin, type OwnerSession, type OwnerSessionService, type SignedIn } from './sessions.js';

export type SignupMode = 'invite' | 'open';

export interface OwnerAccountsConfig {
  signup: SignupMode;
  signupsPerIpPerHour: number;
  passwordLinkHours: number;
  /** config `owners.operators`: login emails of the owners who operate the service. */
  operators: readonly string[];
}

/** What an owner sees of itself (GET /api/user/me). */
export interface OwnerView {
  id: string;
  email: string;
  address: string;
  credits: number;
  accountStatus: Account['status'];
  twoFactor: TwoFactorResult['status'];
  createdAt: string;
}

export interface SignupAnswer {
  status: 'accepted';
  message: string;
}

const HOUR_MS = 60 * 60 * 1000;
const LINK_GONE = 'this link was used or has expired; ask the operator for a new one (agentpost owners link)';

/** Human accounts: sign-up, operator creation with a one-time link, passwords, 2FA. */
export class OwnerAccountService {
  constructor(
    private readonly store: Store,
    private readonly clock: Clock,
    private readonly rateLimiter: RateLimiter,
    private readonly accounts: AccountService,
    private readonly passwords: Passwords,
    private readonly sessions: OwnerSessionService,
    private readonly twoFactor: TwoFactorService,
    private readonly config: OwnerAccountsConfig,
  ) {}

  get signupMode(): SignupMode {
    return this.config.signup;
  }

  /**
   * Open sign-up (`owners.signup` = open). The answer is the same whether the email was free
   * or taken, and both paths hash a password, so the answer itself reveals nothing; a taken
   * email keeps its password. Limited per client address like registration.
   */
  async signup(input: { email: string; password: string }, clientIp: string): Promise<SignupAnswer> {
    if (this.config.signup !== 'open') throw new AppError('forbidden', 'sign-up is by invitation here: ask the operator to create your account');
    const loginEmail = checkLoginEmail(input.email);
    checkPasswordPolicy(input.password);
    await this.rateLimiter.take(
      { bucket: 'owner-signup', limit: this.config.signupsPerIpPerHour, windowMs: HOUR_MS, message: 'too many sign-ups from this address; try again later' },
      clientIp,
    );
    const hash = await this.passwords.hash(input.password);
    await this.store.transaction(async () => {
      if (await this.store.owners.loginByEmail(loginEmail)) return;
      await this.createHuman(loginEmail, hash);
    });
    return { status: 'accepted', message: 'If this email was free, its account exists now: sign in with it.' };
  }

  /** `agentpost owners create <email>`: the account, and a one-time link to set its password. */
  async createByOperator(email: string): Promise<{ account: Account; token: string }> {
    const loginEmail = checkLoginEmail(email);
    return await this.store.transaction(async () => {
      if (await this.store.owners.loginByEmail(loginEmail))
        throw new AppError('conflict', `an owner ${loginEmail} exists already; use agentpost owners link to give it a new link`);
      const account = await this.createHuman(loginEmail, null);
      return { account, token: await this.newLink(account.id) };
    });
  }

  /** `agentpost owners link <email>`: a new one-time link (a forgotten password); earlier links stay until used or expired. */
  async linkByOperator(email: string): Promise<string> {
    const login = await this.store.owners.loginByEmail(normalizeLogin(email));
    if (!login) throw new AppError('not_found', `no owner ${normalizeLogin(email)}`);
    return await this.store.transaction(() => this.newLink(login.accountId));
  }

  /** Whether a link can still be used: the console shows its form only then. */
  async linkIsUsable(token: string): Promise<boolean> {
    return (await this.store.owners.linkAccount(sha256Hex(token), this.clock.now().getTime())) !== null;
  }

  /** Sets the password with a one-time link; every session of the account ends and a new one opens. */
  async setPasswordWithLink(token: string, password: string): Promise<SignedIn> {
    checkPasswordPolicy(password);
    const tokenHash = sha256Hex(token);
    const accountId = await this.store.owners.linkAccount(tokenHash, this.clock.now().getTime());
    if (!accountId) throw new AppError('not_found', LINK_GONE);
    const hash = await this.passwords.hash(password);
    await this.store.transaction(async () => {
      const now = this.clock.now().getTime();
      if (!(await this.store.owners.useLink(tokenHash, accountId, now))) throw new AppError('not_found', LINK_GONE);
      await this.store.owners.setPassword(accountId, hash, now);
      await this.store.owners.endSessionsOf(accountId, now);
    });
    return this.sessions.open(accountId);
  }

  /** Needs the current password; ends every session of the owner, this one too, and opens a new one. */
  async changePassword(session: OwnerSession, currentPassword: string, newPassword: string): Promise<SignedIn> {
    const login = await this.loginOf(session.ownerId);
    if (!(await this.passwords.verify(login.passwordHash, currentPassword))) {
      throw new AppError('forbidden', 'the current password is wrong', { field: 'currentPassword' });
    }
    checkPasswordPolicy(newPassword, 'newPassword');
    const hash = await this.passwords.hash(newPassword);
    await this.store.transaction(async () => {
      const now = this.clock.now().getTime();
      await this.store.owners.setPassword(session.ownerId, hash, now);
      await this.store.owners.endSessionsOf(session.ownerId, now);
    });
    return this.sessions.open(session.ownerId);
  }

  /**
   * Whether the signed-in owner operates this service (config `owners.operators`, its login
   * email in any case): the whole deployment's health is for operators only.
   */
  async isOperator(session: OwnerSession): Promise<boolean> {
    const login = normalizeLogin((await this.loginOf(session.ownerId)).loginEmail);
    return this.config.operators.some((email) => normalizeLogin(email) === login);
  }

  async me(session: OwnerSession): Promise<OwnerView> {
    const account = await this.accounts.get(session.ownerId);
    return {
      id: account.id,
      email: (await this.loginOf(account.id)).loginEmail,
      address: account.email,
      credits: account.credits,
      accountStatus: account.status,
      twoFactor: await this.twoFactor.statusOf(account.id),
      createdAt: new Date(account.createdAt).toISOString(),
    };
  }

  /** The owner's own TOTP factor: enroll, confirm, disable (the same actions agents have). */
  async twoFactorAction(session: OwnerSession, action: 'enroll' | 'confirm' | 'disable', factorCode?: string): Promise<TwoFactorResult> {
    if (action === 'enroll') return await this.twoFactor.enrollAccount(session.ownerId, (await this.loginOf(session.ownerId)).loginEmail);
    if (action === 'confirm') return await this.twoFactor.confirmAccount(session.ownerId, factorCode);
    return await this.twoFactor.disableAccount(session.ownerId, factorCode);
  }

  private async createHuman(loginEmail: string, passwordHash: string | null): Promise<Account> {
    const account = await this.accounts.createHuman(loginEmail);
    const now = this.clock.now().getTime();
    await this.store.owners.insertLogin({ accountId: account.id, loginEmail, passwordHash, passwordChangedAt: passwordHash ? now : null, createdAt: now });
    return account;
  }

  private async newLink(accountId: string): Promise<string> {
    const token = randomBytes(32).toString('base64url');
    const now = this.clock.now().getTime();
    await this.store.owners.insertLink({ tokenHash: sha256Hex(token), accountId, createdAt: now, expiresAt: now + this.config.passwordLinkHours * HOUR_MS });
    return token;
  }

  private async loginOf(ownerId: string) {
    const login = await this.store.owners.loginOf(ownerId);
    if (!login) throw new AppError('not_found', 'no such owner');
    return login;
  }
}

/** The login email is a login name, never mailed; it must still look like an address. */
const checkLoginEmail = (email: string): string => {
  const loginEmail = normalizeLogin(email);
  if (!isValidAddress(loginEmail)) throw invalidInput('email', 'email must be an address like name@example.com');
  return loginEmail;
};
