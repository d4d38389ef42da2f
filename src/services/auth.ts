import { AppError } from '../core/errors.js';
import type { Clock } from '../core/clock.js';
import { hashKey, keyKindOf } from '../core/keys.js';
import type { Permission, Principal } from '../core/types.js';
import type { Store } from '../store/index.js';

export const ALL_PERMISSIONS: readonly Permission[] = ['mail:read', 'mail:send', 'domains:read', 'domains:write'];

const UNAUTHORIZED = 'missing or invalid API key';

/** Resolves a Bearer secret to the caller. Only the SHA-256 of a key is ever looked up. */
export class AuthService {
  constructor(private readonly store: Store, private readonly clock: Clock) {}

  authenticate(secret: string | null): Principal {
    if (!secret || keyKindOf(secret) === null) throw new AppError('unauthorized', UNAUTHORIZED);
    const key = this.store.keys.byHash(hashKey(secret));
    const now = this.clock.now().getTime();
    if (!key || !isUsable(key.status) || (key.expiresAt !== null && key.expiresAt <= now)) {
      throw new AppError('unauthorized', UNAUTHORIZED);
    }
    const account = this.store.accounts.byId(key.accountId);
    if (!account) throw new AppError('unauthorized', UNAUTHORIZED);
    return { accountId: account.id, keyId: key.id, kind: key.kind, permissions: ALL_PERMISSIONS };
  }
}

/** A pending replacement key works before activation (contract: key rotation). */
const isUsable = (status: string): boolean => status === 'active' || status === 'pending';

export const requirePermission = (principal: Principal, permission: Permission): void => {
  if (!principal.permissions.includes(permission)) {
    throw new AppError('forbidden', `this key lacks the ${permission} permission`);
  }
};

export const requireFullKey = (principal: Principal): void => {
  if (principal.kind !== 'full') throw new AppError('forbidden', 'this action needs the full account key');
};
