import type { Router } from '@koa/router';
import type { Context } from 'koa';
import { HTTP_STATUS_OF, isAppError, type ErrorCode } from '../../core/errors.js';
import { notice } from '../components.js';
import type { ConsoleDeps } from '../context.js';
import { field, readForm } from '../forms.js';
import { html, segment, type Html } from '../html.js';
import { requireSignedIn } from '../session.js';
import { domainPage } from './domain-view.js';
import { domainCaller } from './domains.js';

/** What a form on the domain page may fail with and still show the page, with the reason on top. */
const SHOWN: readonly ErrorCode[] = ['invalid_input', 'conflict', 'payment_required', 'forbidden', 'rate_limited', 'not_found'];

/** One domain's page and its forms: verify, delete, aliases and mailboxes (the REST rules, the owner as holder). */
export const domainPages = (router: Router, deps: ConsoleDeps): void => {
  const { services } = deps;

  /** Runs a form's action; a refusal re-shows the page (the domain itself not being the owner's stays an error page). */
  const act = async (ctx: Context, action: (form: URLSearchParams) => Promise<Html | null> | Html | null): Promise<void> => {
    const form = await readForm(deps, ctx);
    let shown: Html | null;
    try {
      shown = await action(form);
    } catch (error) {
      if (!isAppError(error) || !SHOWN.includes(error.code)) throw error;
      return await domainPage(deps, ctx, notice(error.message, 'bad'), HTTP_STATUS_OF[error.code]);
    }
    if (shown) return await domainPage(deps, ctx, shown);
    ctx.status = 303;
    ctx.redirect(`/domains/${segment(ctx.params.id)}`);
  };

  router.get('/domains/:id', requireSignedIn, (ctx) => domainPage(deps, ctx));
  router.post('/domains/:id/verify', requireSignedIn, (ctx) =>
    act(ctx, async () => {
      const outcome = await services.domainVerification.verify(domainCaller(ctx), ctx.params.id);
      return outcome.verified
        ? notice('Verified: the ownership record and the MX are in place.')
        : notice(`Not verified: ${outcome.statusReason ?? 'see the checks below'}.`, 'bad');
    }),
  );
  router.post('/domains/:id/delete', requireSignedIn, async (ctx) => {
    await readForm(deps, ctx);
    try {
      await services.domains.delete(domainCaller(ctx), ctx.params.id);
    } catch (error) {
      if (!isAppError(error) || error.code !== 'conflict') throw error;
      return await domainPage(deps, ctx, notice(error.message, 'bad'), HTTP_STATUS_OF[error.code]);
    }
    ctx.status = 303;
    ctx.redirect('/domains');
  });

  router.post('/domains/:id/aliases', requireSignedIn, (ctx) =>
    act(ctx, async (form) => {
      await services.aliases.create(domainCaller(ctx), ctx.params.id, { localPart: field(form, 'localPart') ?? '', mailbox: field(form, 'mailbox') ?? '' });
      return null;
    }),
  );
  router.post('/domains/:id/aliases/:aliasId/delete', requireSignedIn, (ctx) =>
    act(ctx, async () => {
      await services.aliases.delete(domainCaller(ctx), ctx.params.id, ctx.params.aliasId);
      return null;
    }),
  );
  router.post('/domains/:id/mailboxes', requireSignedIn, (ctx) =>
    act(ctx, async (form) => {
      const made = await services.domainMailboxes.create(domainCaller(ctx), ctx.params.id, {
        localPart: field(form, 'localPart') ?? '',
        agentId: field(form, 'agentId'),
      });
      return html`<section class="card"><p class="notice good">${made.email} is ready. Copy its key now: it is shown only once.</p>
<code class="secret">${made.apiKey}</code>
<p>It works like any agent's key (REST, MCP, IMAP, submission); the mailbox is under <a href="/agents/${segment(made.id)}">your agents</a>.</p></section>`;
    }),
  );
  router.post('/domains/:id/mailboxes/:mailboxId/delete', requireSignedIn, (ctx) =>
    act(ctx, async (form) => {
      const deleted = await services.domainMailboxes.delete(domainCaller(ctx), ctx.params.id, ctx.params.mailboxId, field(form, 'factorCode'));
      return notice(deleted.message);
    }),
  );
};
