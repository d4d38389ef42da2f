import type { Router } from '@koa/router';
import { validateInput } from '../../core/validate.js';
import type { DraftFilter } from '../../services/owners/approvals.js';
import type { SendRequest } from '../../services/sending/send-input.js';
import { readJsonBody } from '../body.js';
import type { HttpDeps } from '../context.js';
import { ownerOf, requireOwner } from '../owner-auth.js';

const SMALL_BODY_BYTES = 16 * 1024;

/** The owner's own mailbox sending (a human free account), and drafts waiting for approval. */
export const userMailRoutes = (router: Router, deps: HttpDeps): void => {
  const { services } = deps;
  const owner = requireOwner(services.ownerSessions);
  router.post('/api/user/send', owner, async (ctx) => {
    const input = validateInput<SendRequest>('send-request.json', await readJsonBody(ctx, deps.body.sendBytes, deps.body.budget));
    const idempotencyKey = ctx.headers['idempotency-key'] === undefined ? undefined : ctx.get('idempotency-key');
    ctx.body = await services.ownerViews.send(ownerOf(ctx), input, idempotencyKey);
  });

  router.get('/api/user/drafts', owner, async (ctx) => {
    const query = validateInput<{ status: DraftFilter }>('owner-drafts-query.json', { ...ctx.query }, { coerce: true });
    ctx.body = await services.approvals.list(ownerOf(ctx), query.status);
  });
  router.get('/api/user/drafts/:id', owner, async (ctx) => {
    ctx.body = await services.approvals.get(ownerOf(ctx), ctx.params.id);
  });
  router.post('/api/user/drafts/:id/approve', owner, async (ctx) => {
    const input = validateInput<{ version: string }>('draft-approve-request.json', await readJsonBody(ctx, SMALL_BODY_BYTES, deps.body.budget));
    ctx.body = await services.approvals.approve(ownerOf(ctx), ctx.params.id, input.version);
  });
  router.post('/api/user/drafts/:id/reject', owner, async (ctx) => {
    const input = validateInput<{ reason?: string }>('draft-reject-request.json', await readJsonBody(ctx, SMALL_BODY_BYTES, deps.body.budget));
    ctx.body = await services.approvals.reject(ownerOf(ctx), ctx.params.id, input.reason);
  });
};
