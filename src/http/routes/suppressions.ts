import type { Router } from '@koa/router';
import { principalOf, requireAuth } from '../auth.js';
import type { HttpDeps } from '../context.js';

/** Registered before the outbound routes, so /outbound/suppressions is not taken for a submission id. */
export const suppressionRoutes = (router: Router, deps: HttpDeps): void => {
  const { services } = deps;
  router.get('/api/v1/agent/outbound/suppressions', requireAuth(services.auth), async (ctx) => {
    ctx.body = await services.suppressions.list(principalOf(ctx));
  });
  router.delete('/api/v1/agent/outbound/suppressions/:id', requireAuth(services.auth), async (ctx) => {
    ctx.body = await services.suppressions.release(principalOf(ctx), ctx.params.id);
  });
};
