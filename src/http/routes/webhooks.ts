import type { Router } from '@koa/router';
import type { CreateWebhookInput } from '../../services/webhooks/endpoints.js';
import { principalOf, requireAuth } from '../auth.js';
import { readJsonBody } from '../body.js';
import type { HttpDeps } from '../context.js';

/** The webhook endpoints (docs/agents/webhooks.md). The deliveries routes come first so "deliveries" is never taken for an id. */
export const webhookRoutes = (router: Router, deps: HttpDeps): void => {
  const { services, validator } = deps;
  const auth = requireAuth(services.auth);
  router.get('/api/v1/agent/webhooks/deliveries', auth, async (ctx) => {
    const query = validator.validate<{ before?: string }>('webhook-deliveries-query.json', { ...ctx.query }, { coerce: true });
    ctx.body = await services.webhookDeliveries.list(principalOf(ctx), query.before);
  });
  router.get('/api/v1/agent/webhooks/deliveries/:id', auth, async (ctx) => {
    ctx.body = await services.webhookDeliveries.get(principalOf(ctx), ctx.params.id);
  });
  router.post('/api/v1/agent/webhooks/deliveries/:id', auth, async (ctx) => {
    ctx.body = await services.webhookDeliveries.replay(principalOf(ctx), ctx.params.id);
  });
  router.post('/api/v1/agent/webhooks', auth, async (ctx) => {
    const input = validator.validate<CreateWebhookInput>('webhook-create-request.json', await readJsonBody(ctx, deps.body.smallBytes, deps.body.budget));
    ctx.body = await services.webhooks.create(principalOf(ctx), input);
    ctx.status = 201;
  });
  router.get('/api/v1/agent/webhooks', auth, async (ctx) => {
    ctx.body = await services.webhooks.list(principalOf(ctx));
  });
  router.delete('/api/v1/agent/webhooks/:id', auth, async (ctx) => {
    ctx.body = await services.webhooks.delete(principalOf(ctx), ctx.params.id);
  });
  router.post('/api/v1/agent/webhooks/:id/verify', auth, async (ctx) => {
    ctx.body = await services.webhooks.verify(principalOf(ctx), ctx.params.id);
  });
};
