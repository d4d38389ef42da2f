import type { Router } from '@koa/router';
import { validateInput } from '../../core/validate.js';
import type { AccessKeyRequest } from '../../services/keys/access-keys.js';
import type { ListQuery } from '../../services/mail/mailbox.js';
import { readJsonBody } from '../body.js';
import type { HttpDeps } from '../context.js';
import { ownerOf, requireOwner } from '../owner-auth.js';
import { sendJson } from '../json-body.js';

const SMALL_BODY_BYTES = 64 * 1024;

/**
 * An owner's agents: claims, and per agent (or the owner's own account) the read views, keys
 * and revocation. Every handler names the account; the service checks it is the owner's.
 */
export const userAgentRoutes = (router: Router, deps: HttpDeps): void => {
  const { services } = deps;
  const { ownership, ownerViews } = services;
  const owner = requireOwner(services.ownerSessions);

  router.get('/api/user/agents', owner, async (ctx) => {
    ctx.body = await ownership.list(ownerOf(ctx));
  });
  router.post('/api/user/agents/claim', owner, async (ctx) => {
    const input = validateInput<{ apiKey: string }>('owner-claim-request.json', await readJsonBody(ctx, SMALL_BODY_BYTES, deps.body.budget));
    ctx.body = await ownership.claimWithKey(ownerOf(ctx), input.apiKey);
  });
  router.post('/api/user/agents/claim-codes', owner, async (ctx) => {
    validateInput('empty.json', await readJsonBody(ctx, SMALL_BODY_BYTES, deps.body.budget));
    ctx.body = await ownership.createClaimCode(ownerOf(ctx));
  });
  router.get('/api/user/agents/:userId', owner, async (ctx) => {
    ctx.body = await ownerViews.overview(ownerOf(ctx), ctx.params.userId);
  });
  router.get('/api/user/agents/:userId/inbox', owner, async (ctx) => {
    const query = validateInput<ListQuery>('inbox-query.json', { ...ctx.query }, { coerce: true });
    ctx.body = await ownerViews.inbox(ownerOf(ctx), ctx.params.userId, query);
  });
  router.get('/api/user/agents/:userId/email/:id', owner, async (ctx) => {
    const query = validateInput<{ id: string; folder: string }>('owner-email-query.json', { ...ctx.query, id: ctx.params.id }, { coerce: true });
    sendJson(ctx, await ownerViews.email(ownerOf(ctx), ctx.params.userId, query.folder, Number(query.id)));
  });
  router.get('/api/user/agents/:userId/outbound', owner, async (ctx) => {
    const query = validateInput<{ before?: string }>('outbound-query.json', { ...ctx.query }, { coerce: true });
    ctx.body = await ownerViews.outbound(ownerOf(ctx), ctx.params.userId, query.before);
  });
  router.get('/api/user/agents/:userId/outbound/:id', owner, async (ctx) => {
    ctx.body = await ownerViews.outboundDetail(ownerOf(ctx), ctx.params.userId, ctx.params.id.toLowerCase());
  });
  router.get('/api/user/agents/:userId/webhooks', owner, async (ctx) => {
    ctx.body = await ownerViews.webhooks(ownerOf(ctx), ctx.params.userId);
  });
  router.get('/api/user/agents/:userId/webhooks/deliveries', owner, async (ctx) => {
    const query = validateInput<{ before?: string }>('webhook-deliveries-query.json', { ...ctx.query }, { coerce: true });
    ctx.body = await ownerViews.deliveries(ownerOf(ctx), ctx.params.userId, query.before);
  });
  router.get('/api/user/agents/:userId/webhooks/deliveries/:id', owner, async (ctx) => {
    ctx.body = await ownerViews.delivery(ownerOf(ctx), ctx.params.userId, ctx.params.id);
  });
  router.get('/api/user/agents/:userId/access-keys', owner, async (ctx) => {
    ctx.body = await ownerViews.accessKeys(ownerOf(ctx), ctx.params.userId);
  });
  router.post('/api/user/agents/:userId/access-keys', owner, async (ctx) => {
    const input = validateInput<AccessKeyRequest>('access-key-request.json', await readJsonBody(ctx, SMALL_BODY_BYTES, deps.body.budget));
    ctx.body = await ownerViews.issueDraftKey(ownerOf(ctx), ctx.params.userId, input);
    ctx.status = 201;
  });
  router.delete('/api/user/agents/:userId/access-keys/:id', owner, async (ctx) => {
    const input = validateInput<{ factorCode?: string }>('access-key-revoke-request.json', await readJsonBody(ctx, SMALL_BODY_BYTES, deps.body.budget));
    ctx.body = await ownerViews.revokeKey(ownerOf(ctx), ctx.params.userId, ctx.params.id, input.factorCode);
  });
};
