import { randomBytes } from 'node:crypto';
import type { Clock } from '../../core/clock.js';
import { AppError, invalidInput } from '../../core/errors.js';
import { sha256Hex } from '../../core/ids.js';
import { keyKindOf } from '../../core/keys.js';
import type { Account, Permission, Principal } from '../../core/types.js';
import type { Store } from '../../store/index.js';
import { requireFullKey, type AuthService } from '../access/auth.js';
import type { OwnerSession } from './sessions.js';

/** An owned agent in the owner's list. */
export interface AgentSummary {
  id: string;
  kind: Account['kind'];
  agentId: string;
  name: string | null;
  email: string;
  credits: number;
  accountStatus: Account['status'];
  sendingState: Account['sendingState'];
  createdAt: string;
}

export interface ClaimCode {
  code: string;
  expiresAt: string;
}

export interface OwnerOfAgent {
  owner: { id: string; email: string } | null;
}

/** What an owner acting on an account may do through the shared services: read, judge junk (the console's "not junk") and (approving) send. */
const OWNER_PERMISSIONS: readonly Permission[] = ['mail:read', 'mail:send', 'mail:junk'];
const CLAIM_CODE = /^claim_[0-9a-f]{32}$/;
const NOT_YOURS = 'no such agent among yours';

export const agentSummary = (account: Account): AgentSummary => ({
  id: account.id,
  kind: account.kind,
  agentId: account.agentId,
  name: account.name,
  email: account.email,
  credits: account.credits,
  accountStatus: account.status,
  sendingState: account.sendingState,
  createdAt: new Date(account.createdAt).toISOString(),
});

/**
 * Which agents a human owns (docs/design.md "Ownership of agents"): at most one owner per agent,
 * taken by pasting the agent's full key or by the agent redeeming a one-time code. Every
 * owner view goes through `principalFor`, the one place that checks ownership.
 */
export class OwnershipService {
  constructor(
    private readonly store: Store,
    private readonly clock: Clock,
    private readonly auth: AuthService,
    private readonly config: { claimCodeMinutes: number },
  ) {}

  async list(session: OwnerSession): Promise<{ agents: AgentSummary[] }> {
    return { agents: (await this.store.accounts.ownedBy(session.ownerId)).map(agentSummary) };
  }

  /** The agent's full key, pasted once; it is checked and never stored here. Claiming an agent already yours is a no-op. */
  async claimWithKey(session: OwnerSession, apiKey: string): Promise<AgentSummary> {
    if (keyKindOf(apiKey) !== 'full') throw invalidInput('apiKey', "paste the agent's full account key (svc_ and 64 hex characters)");
    let principal: Principal;
    try {
      principal = await this.auth.authenticate(apiKey);
    } catch {
      throw invalidInput('apiKey', 'this key is not a working full account key');
    }
    return await this.store.transaction(async () => agentSummary(await this.take(principal.accountId, session.ownerId)));
  }

  async createClaimCode(session: OwnerSession): Promise<ClaimCode> {
    const code = `claim_${randomBytes(16).toString('hex')}`;
    const now = this.clock.now().getTime();
    const expiresAt = now + this.config.claimCodeMinutes * 60 * 1000;
    await this.store.transaction(() => this.store.owners.insertClaimCode({ codeHash: sha256Hex(code), ownerId: session.ownerId, createdAt: now, expiresAt }));
    return { code, expiresAt: new Date(expiresAt).toISOString() };
  }

  /** POST /api/v1/agent/owner: the agent (full key) accepts an owner with the code it was given. */
  async redeem(principal: Principal, code: string): Promise<OwnerOfAgent> {
    requireFullKey(principal);
    if (!CLAIM_CODE.test(code)) throw invalidInput('code', 'code must be the claim_... code the owner made');
    return await this.store.transaction(async () => {
      const ownerId = await this.store.owners.redeemClaimCode(sha256Hex(code), principal.accountId, this.clock.now().getTime());
      if (!ownerId) throw new AppError('not_found', 'this claim code is unknown, used or expired; ask the owner for a new one');
      await this.take(principal.accountId, ownerId);
      return await this.ownerOf(principal);
    });
  }

  async ownerOf(principal: Principal): Promise<OwnerOfAgent> {
    const ownerId = (await this.store.accounts.byId(principal.accountId))?.ownerId ?? null;
    const login = ownerId ? await this.store.owners.loginOf(ownerId) : null;
    return { owner: ownerId && login ? { id: ownerId, email: login.loginEmail } : null };
  }

  /**
   * The account an owner may see: its own, or an agent it owns. Anything else is 404, so an
   * owner cannot tell another owner's agent from one that does not exist.
   */
  async visible(session: OwnerSession, accountId: string): Promise<Account> {
    const account = await this.store.accounts.byId(accountId);
    const mine = account && (account.id === session.ownerId || (account.kind === 'agent' && account.ownerId === session.ownerId));
    if (!mine) throw new AppError('not_found', NOT_YOURS);
    return account;
  }

  /** An agent (not the owner's own account) that the owner owns. */
  async ownedAgent(session: OwnerSession, accountId: string): Promise<Account> {
    const account = await this.visible(session, accountId);
    if (account.kind !== 'agent') throw new AppError('not_found', NOT_YOURS);
    return account;
  }

  /** The principal of an owner acting on an account it may see, for the shared services. */
  async principalFor(session: OwnerSession, accountId: string): Promise<Principal> {
    const account = await this.visible(session, accountId);
    return { accountId: account.id, keyId: `owner:${session.ownerId}`, kind: 'owner', permissions: OWNER_PERMISSIONS, ownerId: session.ownerId };
  }

  /** Inside the caller's transaction: the agent gets this owner, unless it has another (409). */
  private async take(agentId: string, ownerId: string): Promise<Account> {
    const agent = await this.store.accounts.byId(agentId);
    if (agent?.kind !== 'agent') throw invalidInput('apiKey', 'only agent accounts can be claimed');
    const owner = await this.store.accounts.byId(ownerId);
    if (owner?.kind !== 'human' || owner.status !== 'active') throw new AppError('not_found', 'the owner of this code no longer exists');
    if (agent.ownerId === ownerId) return agent;
    if (agent.ownerId !== null || !(await this.store.accounts.setOwner(agentId, ownerId))) throw new AppError('conflict', 'this agent has an owner already');
    return { ...agent, ownerId };
  }
}
