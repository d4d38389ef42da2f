import type { Router } from '@koa/router';
import { validateInput } from '../../core/validate.js';
import type { ThreadListQuery, ThreadQuery } from '../../services/mail/threads.js';
import { principalOf, requireAuth } from '../auth.js';
import type { HttpDeps } from '../context.js';

export const threadRoutes = (router: Router, deps: HttpDeps): void => {
  const { services } = deps;
  router.get('/api/v1/agent/threads', requireAuth(services.auth), async (ctx) => {
    const query = validateInput<ThreadListQuery>('thread-list-query.json', { ...ctx.query }, { coerce: true });
    ctx.body = await services.threads.list(principalOf(ctx), query);
  });
  router.get('/api/v1/agent/threads/:id', requireAuth(services.auth), async (ctx) => {
    const query = validateInput<ThreadQuery>('thread-query.json', { ...ctx.query, id: ctx.params.id }, { coerce: true });
    ctx.body = await services.threads.get(principalOf(ctx), query);
  });
};
