import type { Context, Next } from 'koa';
import { bearerToken } from '../core/bearer.js';
import { AppError } from '../core/errors.js';
import { keyKindOf } from '../core/keys.js';
import { callerOfKey, callerOfOwner, requireDomainRead, requireDomainWrite, type DomainCaller } from '../services/domains/caller.js';
import type { HttpServices } from './services.js';

export interface DomainCallerState {
  domainCaller: DomainCaller;
}

/**
 * The domain endpoints take an API key with domains:* (the key's account holds the domains)
 * or an owner session JWT (docs/design.md "Domain holder"). The permission is checked before the
 * body is read, so a key that may not write learns that first (403), whatever it sent.
 */
export const requireDomainCaller =
  (services: HttpServices, access: 'read' | 'write') =>
  async (ctx: Context, next: Next): Promise<void> => {
    const bearer = bearerToken(ctx.get('authorization'));
    if (!bearer) throw new AppError('unauthorized', 'missing or invalid API key or owner session');
    const caller = keyKindOf(bearer) === null ? await ownerCaller(services, bearer) : callerOfKey(await services.auth.authenticate(bearer));
    if (access === 'read') requireDomainRead(caller);
    else requireDomainWrite(caller);
    (ctx.state as DomainCallerState).domainCaller = caller;
    await next();
  };

export const domainCallerOf = (ctx: Context): DomainCaller => (ctx.state as DomainCallerState).domainCaller;

/** An owner session JWT: the signed-in owner holds the domains (docs/design.md "Domain holder"). */
const ownerCaller = async (services: HttpServices, bearer: string): Promise<DomainCaller> => {
  const owner = await services.ownerSessions.fromBearer(bearer);
  if (!owner) throw new AppError('unauthorized', 'missing, expired or ended owner session; sign in with POST /api/user/session');
  return callerOfOwner(owner.ownerId);
};
