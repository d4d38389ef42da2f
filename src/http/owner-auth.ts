import type { Context, Next } from 'koa';
import { bearerToken } from '../core/bearer.js';
import { AppError } from '../core/errors.js';
import { keyKindOf } from '../core/keys.js';
import type { OwnerSession, OwnerSessionService } from '../services/owners/sessions.js';

export interface OwnerState {
  owner: OwnerSession;
}

/**
 * /api/user/*: the bearer owner session JWT (docs/design.md "Owner sessions"). An API key is a
 * credential these endpoints do not take (403); anything else missing or invalid is 401. The
 * console's cookie is not accepted here, so these JSON endpoints need no CSRF token.
 */
export const requireOwner =
  (sessions: OwnerSessionService) =>
  async (ctx: Context, next: Next): Promise<void> => {
    const bearer = bearerToken(ctx.get('authorization'));
    if (bearer && keyKindOf(bearer) !== null) {
      throw new AppError('forbidden', 'this endpoint needs an owner session (POST /api/user/session), not an API key');
    }
    const owner = bearer ? await sessions.fromBearer(bearer) : null;
    if (!owner) throw new AppError('unauthorized', 'missing, expired or ended owner session; sign in with POST /api/user/session');
    (ctx.state as OwnerState).owner = owner;
    await next();
  };

export const ownerOf = (ctx: Context): OwnerSession => (ctx.state as OwnerState).owner;
