import type { Router } from '@koa/router';
import { validateInput } from '../../core/validate.js';
import type { SendRequest } from '../../services/sending/send-input.js';
import { readJsonBody } from '../body.js';
import type { HttpDeps } from '../context.js';
import { ownerOf, requireOwner } from '../owner-auth.js';

/** The owner's own mailbox sending (a human free account), and drafts waiting for approval. */
export const userMailRoutes = (router: Router, deps: HttpDeps): void => {
  const { services } = deps;
  const owner = requireOwner(services.ownerSessions);
  router.post('/api/user/send', owner, async (ctx) => {
    const input = validateInput<SendRequest>('send-request.json', await readJsonBody(ctx, deps.maxBodyBytes));
    const idempotencyKey = ctx.headers['idempotency-key'] === undefined ? undefined : ctx.get('idempotency-key');
    ctx.body = await services.ownerViews.send(ownerOf(ctx), input, idempotencyKey);
  });
};
