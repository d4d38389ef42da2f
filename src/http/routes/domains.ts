import type { Router } from '@koa/router';
import { validateInput } from '../../core/validate.js';
import { readJsonBody } from '../body.js';
import type { HttpDeps } from '../context.js';
import { domainCallerOf, requireDomainCaller } from '../domain-auth.js';

/**
 * Custom domains (docs/operators/domains.md: /api/user/domains with /verify, /aliases and
 * /mailboxes beneath it). GET reads (domains:read); changes and verification write
 * (domains:write). Not exposed over MCP. Success is 200 (schema/openapi.json).
 */
export const domainRoutes = (router: Router, deps: HttpDeps): void => {
  const { services } = deps;
  const read = requireDomainCaller(services, 'read');
  const write = requireDomainCaller(services, 'write');
  const body = (ctx: Parameters<typeof readJsonBody>[0]) => readJsonBody(ctx, deps.body.smallBytes, deps.body.budget);

  router.get('/api/user/domains', read, async (ctx) => {
    ctx.body = await services.domains.list(domainCallerOf(ctx));
  });
  router.post('/api/user/domains', write, async (ctx) => {
    const input = validateInput<{ domain: string }>('domain-create-request.json', await body(ctx));
    ctx.body = await services.domains.add(domainCallerOf(ctx), input);
  });
  router.get('/api/user/domains/:id', read, async (ctx) => {
    ctx.body = await services.domains.get(domainCallerOf(ctx), ctx.params.id);
  });
  router.delete('/api/user/domains/:id', write, async (ctx) => {
    ctx.body = await services.domains.delete(domainCallerOf(ctx), ctx.params.id);
  });
  router.post('/api/user/domains/:id/verify', write, async (ctx) => {
    validateInput('empty.json', await body(ctx));
    ctx.body = await services.domainVerification.verify(domainCallerOf(ctx), ctx.params.id);
  });

  router.get('/api/user/domains/:id/aliases', read, async (ctx) => {
    ctx.body = await services.aliases.list(domainCallerOf(ctx), ctx.params.id);
  });
  router.post('/api/user/domains/:id/aliases', write, async (ctx) => {
    const input = validateInput<{ localPart: string; mailbox: string }>('alias-create-request.json', await body(ctx));
    ctx.body = await services.aliases.create(domainCallerOf(ctx), ctx.params.id, input);
  });
  router.get('/api/user/domains/:id/aliases/:aliasId', read, async (ctx) => {
    ctx.body = await services.aliases.get(domainCallerOf(ctx), ctx.params.id, ctx.params.aliasId);
  });
  router.delete('/api/user/domains/:id/aliases/:aliasId', write, async (ctx) => {
    ctx.body = await services.aliases.delete(domainCallerOf(ctx), ctx.params.id, ctx.params.aliasId);
  });

  router.get('/api/user/domains/:id/mailboxes', read, async (ctx) => {
    ctx.body = await services.domainMailboxes.list(domainCallerOf(ctx), ctx.params.id);
  });
  router.post('/api/user/domains/:id/mailboxes', write, async (ctx) => {
    const input = validateInput<{ localPart: string; agentId?: string }>('domain-mailbox-create-request.json', await body(ctx));
    ctx.body = await services.domainMailboxes.create(domainCallerOf(ctx), ctx.params.id, input);
  });
  router.get('/api/user/domains/:id/mailboxes/:mailboxId', read, async (ctx) => {
    ctx.body = await services.domainMailboxes.get(domainCallerOf(ctx), ctx.params.id, ctx.params.mailboxId);
  });
  router.delete('/api/user/domains/:id/mailboxes/:mailboxId', write, async (ctx) => {
    const input = validateInput<{ factorCode?: string }>('domain-mailbox-delete-request.json', await body(ctx));
    ctx.body = await services.domainMailboxes.delete(domainCallerOf(ctx), ctx.params.id, ctx.params.mailboxId, input.factorCode);
  });

  // RFC 8461 section 3.3: the policy of mta-sts.<domain>, for this service's domains only.
  router.get('/.well-known/mta-sts.txt', async (ctx) => {
    const policy = await services.mtaStsPolicyFor(ctx.hostname);
    if (policy === null) return;
    ctx.type = 'text/plain; charset=utf-8';
    ctx.body = policy;
  });
};
