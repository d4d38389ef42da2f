import type { Router } from '@koa/router';
import type { Context, Next } from 'koa';
import type { SendRequest } from '../../services/sending/send-input.js';
import { principalOf, requireAuth } from '../auth.js';
import { readJsonBody } from '../body.js';
import type { HttpDeps } from '../context.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export const sendingRoutes = (router: Router, deps: HttpDeps): void => {
  const { services, validator } = deps;
  const auth = requireAuth(services.auth);
  router.post('/api/v1/agent/send', auth, async (ctx) => {
    // The large limit only for a key that may send; anything else gets the small one (and a 403 after).
    const limit = principalOf(ctx).permissions.includes('mail:send') ? deps.body.sendBytes : deps.body.smallBytes;
    const input = validator.validate<SendRequest>('send-request.json', await readJsonBody(ctx, limit, deps.body.budget));
    const header = ctx.get('idempotency-key');
    ctx.body = await services.sending.send(principalOf(ctx), input, {
      idempotencyKey: ctx.headers['idempotency-key'] === undefined ? undefined : header,
      via: 'rest',
    });
  });
  router.get('/api/v1/agent/sending', auth, async (ctx) => {
    ctx.body = await services.sending.status(principalOf(ctx));
  });
  router.get('/api/v1/agent/outbound', auth, async (ctx) => {
    const query = validator.validate<{ before?: string }>('outbound-query.json', { ...ctx.query }, { coerce: true });
    ctx.body = await services.outbound.list(principalOf(ctx), query.before);
  });
  // Only UUIDs: other literal paths beneath /outbound (e.g. /outbound/suppressions) fall through.
  router.get('/api/v1/agent/outbound/:id', async (ctx: Context, next: Next) => {
    if (!UUID.test(ctx.params.id)) return next();
    await auth(ctx, async () => {
      ctx.body = await services.outbound.detail(principalOf(ctx), ctx.params.id.toLowerCase());
    });
  });
};
