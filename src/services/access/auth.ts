import { AppError } from '../../core/errors.js';
import type { Clock } from '../../core/clock.js';
import { hashKey, keyKindOf } from '../../core/keys.js';
import type { Permission, Principal } from '../../core/types.js';
import type { Store } from '../../store/index.js';
import type { KeyRecord } from '../../store/keys.js';
import { looksLikeJwt, type SessionTokens } from './session-tokens.js';

/** What a full key holds: every permission, drafts included (a full key may also create drafts). */
export const ALL_PERMISSIONS: readonly Permission[] = ['mail:read', 'mail:send', 'mail:junk', 'mail:draft', 'domains:read', 'domains:write'];

const UNAUTHORIZED = 'missing or invalid API key';

export interface AuthenticateOptions {
  /** True only on the draft endpoints: the one place a mail:draft key is accepted. */
  drafts?: boolean;
}

/** Resolves a Bearer secret to the caller. Only the SHA-256 of a key is ever looked up. */
export class AuthService {
  constructor(
    private readonly store: Store,
    private readonly clock: Clock,
    private readonly ownerTokens: SessionTokens,
  ) {}

  /**
   * A missing, unknown, revoked or expired key is 401 (docs/agents/keys.md). A
   * replacement past its 30 minutes is refused here by time even before the sweep marks it.
   * A mail:draft key is exclusive (docs/agents/drafts.md): 403 everywhere but drafts.
   */
  async authenticate(secret: string | null, options: AuthenticateOptions = {}): Promise<Principal> {
    if (!secret || keyKindOf(secret) === null) throw new AppError('unauthorized', UNAUTHORIZED);
    const key = await this.store.keys.byHash(hashKey(secret));
    if (!key || !this.isUsable(key)) throw new AppError('unauthorized', UNAUTHORIZED);
    const account = await this.store.accounts.byId(key.accountId);
    if (!account) throw new AppError('unauthorized', UNAUTHORIZED);
    const permissions = await this.permissionsOf(key);
    if (key.kind === 'access' && permissions.includes('mail:draft') && !options.drafts) {
      throw new AppError('forbidden', 'a mail:draft key can only manage drafts (/api/v1/agent/drafts)');
    }
    return { accountId: account.id, keyId: key.id, kind: key.kind, permissions, ...((await this.isSandbox(key)) ? { sandbox: true } : {}) };
  }

  /** A sandbox access key: its sends are validated, charged to nobody and never leave the host. */
  private async isSandbox(key: KeyRecord): Promise<boolean> {
    return key.kind === 'access' && (await this.store.accessKeys.policy(key.id))?.sandbox === true;
  }

  /**
   * REST under /api/v1/agent: as `authenticate`, except that a valid owner session JWT is a
   * credential this path does not accept (403), not an unknown one (401): owner JWTs are
   * for /api/user/* only.
   */
  async authenticateAgent(secret: string | null, options: AuthenticateOptions = {}): Promise<Principal> {
    if (secret && keyKindOf(secret) === null && looksLikeJwt(secret) && (await this.ownerTokens.verify(secret))) {
      throw new AppError('forbidden', 'owner session tokens are accepted on /api/user/* only; agent endpoints take an API key');
    }
    return await this.authenticate(secret, options);
  }

  /**
   * Whether the key a principal authenticated with still works, for a session that
   * authenticated once and acts later (SMTP submission): a key revoked, rotated away or
   * expired since is refused, as `authenticate` would refuse it now. One lookup by key id.
   */
  async stillValid(principal: Principal): Promise<boolean> {
    const key = await this.store.keys.byId(principal.keyId);
    return key !== null && key.accountId === principal.accountId && this.isUsable(key);
  }

  private isUsable(key: KeyRecord): boolean {
    const now = this.clock.now().getTime();
    if (key.expiresAt !== null && key.expiresAt <= now) return false;
    // A pending replacement works before activation (docs/agents/keys.md, rotation).
    return key.status === 'active' || key.status === 'pending';
  }

  /** A full key holds every permission; a limited key exactly those it was issued with. */
  private async permissionsOf(key: KeyRecord): Promise<readonly Permission[]> {
    if (key.kind === 'full') return ALL_PERMISSIONS;
    return (await this.store.accessKeys.policy(key.id))?.permissions ?? [];
  }

  /**
   * SMTP submission AUTH: the mailbox address as username and the full account key as
   * password. Limited access keys cannot use SMTP (docs/agents/keys.md): 403.
   */
  async authenticateMailbox(username: string, secret: string): Promise<Principal> {
    if (keyKindOf(secret) === 'access') throw new AppError('forbidden', 'limited access keys cannot use SMTP; use the full account key');
    const principal = await this.authenticate(secret);
    if (principal.kind !== 'full') throw new AppError('forbidden', 'limited access keys cannot use SMTP; use the full account key');
    const mailbox = await this.store.accounts.mailboxOfAccount(principal.accountId);
    if (!mailbox || mailbox.address !== username.trim().toLowerCase()) throw new AppError('unauthorized', 'wrong mailbox address or key');
    return principal;
  }
}

export const requirePermission = (principal: Principal, permission: Permission): void => {
  if (!principal.permissions.includes(permission)) {
    throw new AppError('forbidden', `this key lacks the ${permission} permission`);
  }
};

export const requireFullKey = (principal: Principal): void => {
  if (principal.kind !== 'full') throw new AppError('forbidden', 'this action needs the full account key');
};

/** Reading what only the full key reads (key list, webhook history): the full key, or the agent's owner. */
export const requireFullKeyOrOwner = (principal: Principal): void => {
  if (principal.kind !== 'full' && principal.kind !== 'owner') throw new AppError('forbidden', 'this action needs the full account key');
};
