import type { Router } from '@koa/router';
import { validateInput } from '../../core/validate.js';
import type { SendRequest } from '../../services/sending/send-input.js';
import { principalOf, requireAuth } from '../auth.js';
import { readJsonBody } from '../body.js';
import type { HttpDeps } from '../context.js';

/** Drafts: the one place a mail:draft key is accepted (the full key too); they never send. */
export const draftRoutes = (router: Router, deps: HttpDeps): void => {
  const { services } = deps;
  const auth = requireAuth(services.auth, { drafts: true });
  router.post('/api/v1/agent/drafts', auth, async (ctx) => {
    const input = validateInput<SendRequest>('send-request.json', await readJsonBody(ctx, deps.body.sendBytes, deps.body.budget));
    ctx.body = await services.drafts.create(principalOf(ctx), input);
  });
  router.get('/api/v1/agent/drafts', auth, async (ctx) => {
    const query = validateInput<{ before?: string }>('drafts-query.json', { ...ctx.query }, { coerce: true });
    ctx.body = await services.drafts.list(principalOf(ctx), query.before);
  });
  router.get('/api/v1/agent/drafts/:id', auth, async (ctx) => {
    ctx.body = await services.drafts.get(principalOf(ctx), ctx.params.id);
  });
  router.patch('/api/v1/agent/drafts/:id', auth, async (ctx) => {
    const patch = validateInput<Record<string, unknown>>('draft-patch-request.json', await readJsonBody(ctx, deps.body.sendBytes, deps.body.budget));
    ctx.body = await services.drafts.update(principalOf(ctx), ctx.params.id, patch);
  });
  router.delete('/api/v1/agent/drafts/:id', auth, async (ctx) => {
    ctx.body = await services.drafts.delete(principalOf(ctx), ctx.params.id);
  });
};
