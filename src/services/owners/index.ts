import type { Argon2Loader } from '../../core/passwords.js';
import type { AccountService } from '../accounts/accounts.js';
import type { AuthService } from '../access/auth.js';
import type { RateLimiter } from '../access/rate-limiter.js';
import { OwnerAccountService, type OwnerAccountsConfig } from './owner-accounts.js';
import { OwnershipService } from './ownership.js';
import { DraftApprovalService } from './approvals.js';
import { DraftService, type DraftsConfig } from '../drafts/drafts.js';
import { OwnerViewService, type OwnerViewDeps } from './owner-views.js';
import { Passwords } from './passwords.js';
import type { SessionTokens } from '../access/session-tokens.js';
import { OwnerSessionService, type SessionsConfig } from './sessions.js';

/** Config `owners.*`, plus the service's session.key (in secretsDir) that signs JWTs and form tokens. */
export interface OwnersConfig extends OwnerAccountsConfig, SessionsConfig {
  claimCodeMinutes: number;
  sessionKey: Buffer;
}

/** The human side (docs/design.md "Owners, domains and payments"). */
export interface OwnerServices {
  /** Human owners: sign-up, operator creation, passwords and their own 2FA. */
  owners: OwnerAccountService;
  /** Owner sign-in, sessions, JWTs and form tokens. */
  ownerSessions: OwnerSessionService;
  /** Which agents an owner owns: claims by key or code, and the ownership check of every view. */
  ownership: OwnershipService;
  /** The owner's read views of its agents and own mailbox, key issuance and revocation. */
  ownerViews: OwnerViewService;
  /** Drafts an agent writes (mail:draft keys or the full key). */
  drafts: DraftService;
  /** The owner's list of drafts, approval (through the send service) and rejection. */
  approvals: DraftApprovalService;
}

export interface OwnerServiceDeps extends Omit<OwnerViewDeps, 'ownership'> {
  rateLimiter: RateLimiter;
  accounts: AccountService;
  auth: AuthService;
  argon2: Argon2Loader;
  sessionTokens: SessionTokens;
  config: OwnersConfig;
  draftsConfig: DraftsConfig;
}

export const createOwnerServices = (deps: OwnerServiceDeps): OwnerServices => {
  const { store, clock, rateLimiter, twoFactor, accounts, argon2, sessionTokens, config } = deps;
  const passwords = new Passwords(argon2);
  const ownerSessions = new OwnerSessionService(store, clock, rateLimiter, passwords, twoFactor, sessionTokens, config);
  const owners = new OwnerAccountService(store, clock, rateLimiter, accounts, passwords, ownerSessions, twoFactor, config);
  const ownership = new OwnershipService(store, clock, deps.auth, config);
  const drafts = new DraftService(store, clock, deps.mailbox, deps.draftsConfig);
  return {
    owners,
    ownerSessions,
    ownership,
    drafts,
    ownerViews: new OwnerViewService({ ...deps, ownership }),
    approvals: new DraftApprovalService(store, clock, ownership, drafts, deps.sending),
  };
};
