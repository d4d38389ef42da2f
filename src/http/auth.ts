import type { Context, Next } from 'koa';
import { bearerToken } from '../core/bearer.js';
import type { Principal } from '../core/types.js';
import type { AuthenticateOptions, AuthService } from '../services/access/auth.js';

export interface AuthState {
  principal: Principal;
}

export const requireAuth =
  (auth: AuthService, options: AuthenticateOptions = {}) =>
  async (ctx: Context, next: Next): Promise<void> => {
    ctx.state.principal = await auth.authenticateAgent(bearerToken(ctx.get('authorization')), options);
    await next();
  };

export const principalOf = (ctx: Context): Principal => (ctx.state as AuthState).principal;
