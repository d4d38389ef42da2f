import type { Context, Next } from 'koa';
import { bearerToken } from '../core/bearer.js';
import type { Principal } from '../core/types.js';
import type { AuthService } from '../services/accounts/auth.js';

export interface AuthState {
  principal: Principal;
}

export const requireAuth = (auth: AuthService) => async (ctx: Context, next: Next): Promise<void> => {
  ctx.state.principal = auth.authenticate(bearerToken(ctx.get('authorization')));
  await next();
};

export const principalOf = (ctx: Context): Principal => (ctx.state as AuthState).principal;
