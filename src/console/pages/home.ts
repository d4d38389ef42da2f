import { randomBytes } from 'node:crypto';
import type { Router } from '@koa/router';
import type { Context } from 'koa';
import { HTTP_STATUS_OF, isAppError } from '../../core/errors.js';
import { badge, empty, notice, table, usageMeter } from '../components.js';
import { ownerOf, type ConsoleDeps } from '../context.js';
import { field, readForm } from '../forms.js';
import { html, segment } from '../html.js';
import { renderPage } from '../layout.js';
import { csrfField, requireSignedIn } from '../session.js';

const DONE: Record<string, string> = { claimed: 'The agent is yours now.' };

/** The owner's home: its agents, claiming more, its own mailbox, drafts waiting. */
export const homePages = (router: Router, deps: ConsoleDeps): void => {
  const { services } = deps;

  const home = async (ctx: Context, message?: { text: string; tone: 'good' | 'bad' }, status = 200) => {
    const owner = ownerOf(ctx);
    const me = await services.owners.me(owner);
    const { agents } = await services.ownership.list(owner);
    const waiting = (await services.approvals.list(owner, 'open')).drafts.length;
    const rows = await Promise.all(
      agents.map(async (agent) => {
        const sending = await services.ownerViews.sending(owner, agent.id);
        return html`<tr><td><a href="/agents/${segment(agent.id)}">${agent.agentId}</a><br><span class="muted">${agent.email}</span></td>
<td class="num">${agent.credits}</td><td>${badge(sending.state)}</td><td>${usageMeter(sending.usage.recipientsToday, sending.limits.recipientsPerDay)}</td></tr>`;
      }),
    );
    renderPage(deps, ctx, {
      title: 'Your agents',
      active: 'agents',
      status,
      body: html`${notice(message?.text, message?.tone)}
${waiting > 0 ? html`<p class="notice good"><a href="/drafts">${waiting} draft${waiting === 1 ? '' : 's'} waiting for your approval</a></p>` : ''}
${agents.length > 0 ? table(['Agent', 'Credits', 'Sending', 'Today'], rows) : empty('No agents yet: claim one below.')}
<div class="grid">
<section class="card"><h2>Claim an agent with its key</h2>
<form method="post" action="/agents/claim" class="stack">${csrfField(deps, ctx)}
<label>The agent's full account key (svc_…), used once and not kept <input type="password" name="apiKey" autocomplete="off" required></label>
<button type="submit">Claim</button></form></section>
<section class="card"><h2>Or let the agent claim you</h2>
<p>Make a one-time code; the agent sends it with <code>POST /api/v1/agent/owner</code>.</p>
<form method="post" action="/agents/claim-code">${csrfField(deps, ctx)}<button type="submit" class="secondary">Make a claim code</button></form></section>
<section class="card"><h2>Your own mailbox</h2>
<dl class="facts"><dt>Address</dt><dd>${me.address}</dd><dt>Credits</dt><dd>${me.credits}</dd></dl>
<p><a href="/agents/${segment(me.id)}">Open it</a> · <a href="/compose">Write a message</a></p></section>
</div>`,
    });
  };

  router.get('/', requireSignedIn, (ctx) => home(ctx, DONE[String(ctx.query.done ?? '')] ? { text: DONE[String(ctx.query.done)], tone: 'good' } : undefined));
  router.post('/agents/claim', requireSignedIn, async (ctx) => {
    const form = await readForm(deps, ctx);
    try {
      await services.ownership.claimWithKey(ownerOf(ctx), form.get('apiKey')?.trim() ?? '');
    } catch (error) {
      if (!isAppError(error) || !['invalid_input', 'conflict'].includes(error.code)) throw error;
      return await home(ctx, { text: error.message, tone: 'bad' }, error.code === 'conflict' ? 409 : 400);
    }
    ctx.status = 303;
    ctx.redirect('/?done=claimed');
  });
  router.post('/agents/claim-code', requireSignedIn, async (ctx) => {
    await readForm(deps, ctx);
    const made = await services.ownership.createClaimCode(ownerOf(ctx));
    renderPage(deps, ctx, {
      title: 'Claim code',
      active: 'agents',
      body: html`<div class="card"><p>Give this code to the agent. It works once, until ${made.expiresAt}, and is shown only now.</p>
<code class="secret">${made.code}</code>
<p>The agent redeems it with its full key:</p>
<pre class="body">curl -X POST ${deps.baseUrl()}/api/v1/agent/owner \\
  -H "Authorization: Bearer $AGENTPOST_API_KEY" -H "Content-Type: application/json" \\
  -d '{"code": "${made.code}"}'</pre>
<p><a href="/">Back to your agents</a></p></div>`,
    });
  });

  router.get('/compose', requireSignedIn, (ctx) => composePage(ctx));
  router.post('/compose', requireSignedIn, async (ctx) => {
    const form = await readForm(deps, ctx, deps.body.sendBytes);
    const owner = ownerOf(ctx);
    try {
      const sent = await services.ownerViews.send(
        owner,
        { to: form.get('to') ?? '', subject: form.get('subject') ?? '', text: form.get('text') ?? '' },
        field(form, 'idempotencyKey'),
      );
      ctx.status = 303;
      ctx.redirect(`/agents/${segment(owner.ownerId)}/outbound/${segment(sent.id)}`);
    } catch (error) {
      if (!isAppError(error) || error.code === 'unavailable' || error.code === 'submission_failed') throw error;
      await composePage(ctx, error.message, HTTP_STATUS_OF[error.code]);
    }
  });

  const composePage = async (ctx: Context, error?: string, status = 200) => {
    const me = await services.owners.me(ownerOf(ctx));
    renderPage(deps, ctx, {
      title: 'Write a message',
      active: 'agents',
      status,
      body: html`${notice(error, 'bad')}<p class="muted">From your own mailbox ${me.address}: one credit per recipient, at most ${(await services.ownerViews.sending(ownerOf(ctx), me.id)).limits.recipientsPerDay} recipients a day.</p>
<form method="post" action="/compose" class="stack card">${csrfField(deps, ctx)}
<input type="hidden" name="idempotencyKey" value="console-${randomBytes(12).toString('hex')}">
<label>To (addresses, comma-separated) <input type="text" name="to" required></label>
<label>Subject <input type="text" name="subject" maxlength="998" required></label>
<label>Message <textarea name="text" required></textarea></label>
<button type="submit">Send</button></form>`,
    });
  };
};
