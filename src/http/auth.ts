import type { Context, Next } from 'koa';
import type { Principal } from '../core/types.js';
import type { AuthService } from '../services/auth.js';

export interface AuthState {
  principal: Principal;
}

/** Contract Authentication 1: the key comes only from `Authorization: Bearer`, never the URL. */
export const bearerToken = (header: string | undefined): string | null => {
  const match = /^Bearer[ ]+(\S+)\s*$/i.exec(header ?? '');
  return match ? match[1] : null;
};

export const requireAuth = (auth: AuthService) => async (ctx: Context, next: Next): Promise<void> => {
  ctx.state.principal = auth.authenticate(bearerToken(ctx.get('authorization')));
  await next();
};

export const principalOf = (ctx: Context): Principal => (ctx.state as AuthState).principal;
