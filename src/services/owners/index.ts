import type { Clock } from '../../core/clock.js';
import type { Argon2Loader } from '../../core/passwords.js';
import type { Store } from '../../store/index.js';
import type { AccountService } from '../accounts/accounts.js';
import type { TwoFactorService } from '../accounts/two-factor.js';
import type { RateLimiter } from '../rate-limiter.js';
import { OwnerAccountService, type OwnerAccountsConfig } from './owner-accounts.js';
import { Passwords } from './passwords.js';
import type { SessionTokens } from './session-tokens.js';
import { OwnerSessionService, type SessionsConfig } from './sessions.js';

/** Config `owners.*`, plus the data folder's session.key that signs JWTs and form tokens. */
export interface OwnersConfig extends OwnerAccountsConfig, SessionsConfig {
  claimCodeMinutes: number;
  sessionKey: Buffer;
}

/** The human side (DESIGN.md "Owners, domains and payments"). */
export interface OwnerServices {
  /** Human owners: sign-up, operator creation, passwords and their own 2FA. */
  owners: OwnerAccountService;
  /** Owner sign-in, sessions, JWTs and form tokens. */
  ownerSessions: OwnerSessionService;
}

export interface OwnerServiceDeps {
  store: Store;
  clock: Clock;
  rateLimiter: RateLimiter;
  twoFactor: TwoFactorService;
  accounts: AccountService;
  argon2: Argon2Loader;
  sessionTokens: SessionTokens;
  config: OwnersConfig;
}

export const createOwnerServices = ({ store, clock, rateLimiter, twoFactor, accounts, argon2, sessionTokens, config }: OwnerServiceDeps): OwnerServices => {
  const passwords = new Passwords(argon2);
  const ownerSessions = new OwnerSessionService(store, clock, rateLimiter, passwords, twoFactor, sessionTokens, config);
  const owners = new OwnerAccountService(store, clock, rateLimiter, accounts, passwords, ownerSessions, twoFactor, config);
  return { owners, ownerSessions };
};
