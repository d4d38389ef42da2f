import type { Router } from '@koa/router';
import { validateInput } from '../../core/validate.js';
import { principalOf, requireAuth } from '../auth.js';
import { readJsonBody } from '../body.js';
import type { HttpDeps } from '../context.js';

/** An agent's side of ownership: who owns it, and redeeming an owner's claim code (full key). */
export const agentOwnerRoutes = (router: Router, deps: HttpDeps): void => {
  const { services } = deps;
  const auth = requireAuth(services.auth);
  router.get('/api/v1/agent/owner', auth, async (ctx) => {
    ctx.body = await services.ownership.ownerOf(principalOf(ctx));
  });
  router.post('/api/v1/agent/owner', auth, async (ctx) => {
    const input = validateInput<{ code: string }>('agent-owner-request.json', await readJsonBody(ctx, deps.body.smallBytes, deps.body.budget));
    ctx.body = await services.ownership.redeem(principalOf(ctx), input.code);
  });
};
