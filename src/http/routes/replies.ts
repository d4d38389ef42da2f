import type { Router } from '@koa/router';
import { validateInput } from '../../core/validate.js';
import type { ReplyRequest } from '../../services/sending/reply.js';
import { principalOf, requireAuth } from '../auth.js';
import { readJsonBody } from '../body.js';
import type { HttpDeps } from '../context.js';

interface ReplyQuery {
  id: string;
  folder: string;
  uidValidity?: string;
}

export const replyRoutes = (router: Router, deps: HttpDeps): void => {
  const { services } = deps;
  for (const [path, all] of [
    ['reply', false],
    ['reply-all', true],
  ] as const) {
    router.post(`/api/v1/agent/email/:id/${path}`, requireAuth(services.auth), async (ctx) => {
      const query = validateInput<ReplyQuery>('reply-query.json', { ...ctx.query, id: ctx.params.id }, { coerce: true });
      // As for POST send: the large body limit only for a key that may send.
      const limit = principalOf(ctx).permissions.includes('mail:send') ? deps.body.sendBytes : deps.body.smallBytes;
      const input = validateInput<ReplyRequest>('reply-request.json', await readJsonBody(ctx, limit, deps.body.budget));
      ctx.body = await services.replies.reply(principalOf(ctx), { uid: Number(query.id), folder: query.folder, uidValidity: query.uidValidity, all }, input, {
        idempotencyKey: ctx.headers['idempotency-key'] === undefined ? undefined : ctx.get('idempotency-key'),
        via: 'rest',
      });
    });
  }
};
