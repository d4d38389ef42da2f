import type { Router } from '@koa/router';
import type { Context } from 'koa';
import { HTTP_STATUS_OF, isAppError } from '../../core/errors.js';
import { badge, empty, notice, table, timeOf } from '../components.js';
import { ownerOf, type ConsoleDeps } from '../context.js';
import { field, readForm } from '../forms.js';
import { html, segment, type Html } from '../html.js';
import { renderPage } from '../layout.js';
import { csrfField, requireSignedIn } from '../session.js';
import { agentTabs } from './agent-frame.js';

/** An agent's access keys: the list, issuing a mail:draft key (secret shown once), revoking. */
export const agentKeyPages = (router: Router, deps: ConsoleDeps): void => {
  const { services } = deps;
  const { ownerViews } = services;

  const keysPage = async (ctx: Context, top: Html = html``, status = 200) => {
    const owner = ownerOf(ctx);
    const agent = await ownerViews.agent(owner, ctx.params.id);
    const needsCode = (await services.owners.me(owner)).twoFactor === 'enabled';
    const base = `/agents/${segment(agent.id)}/keys`;
    const rows = (await ownerViews.accessKeys(owner, agent.id)).accessKeys.map(
      (key) => html`<tr><td>${key.name}</td><td>${key.permissions.join(', ')}</td>
<td>${badge(key.status)}</td><td>${timeOf(key.createdAt, deps.timeZone)}</td><td>${key.expiresAt ? timeOf(key.expiresAt, deps.timeZone) : html`<span class="muted">never</span>`}</td>
<td>${
        key.status === 'active'
          ? html`<form method="post" action="${base}/${segment(key.id)}/revoke" class="row">${csrfField(deps, ctx)}
${needsCode ? html`<input type="text" name="factorCode" inputmode="numeric" pattern="[0-9]{6}" placeholder="2FA code" aria-label="Your two-factor code" required>` : ''}
<button type="submit" class="danger">Revoke</button></form>`
          : ''
      }</td></tr>`,
    );
    renderPage(deps, ctx, {
      title: agent.agentId,
      active: 'agents',
      status,
      body: html`${agentTabs(agent, 'keys')}${top}
${rows.length === 0 ? empty('No access keys.') : table(['Name', 'Permissions', 'Status', 'Issued', 'Expires', ''], rows)}
<section class="card"><h2>Issue a draft key</h2>
<p>A <code>mail:draft</code> key lets the agent write drafts and nothing else; you approve each one before it is sent.</p>
<form method="post" action="${base}" class="stack">${csrfField(deps, ctx)}
<label>Name <input type="text" name="name" maxlength="100" required value="drafts"></label>
<label>Expires (optional) <input type="date" name="expiresOn"></label>
<button type="submit">Issue the key</button></form></section>`,
    });
  };

  router.get('/agents/:id/keys', requireSignedIn, (ctx) => keysPage(ctx));
  router.post('/agents/:id/keys', requireSignedIn, async (ctx) => {
    const form = await readForm(deps, ctx);
    const expiresOn = field(form, 'expiresOn');
    try {
      const key = await ownerViews.issueDraftKey(ownerOf(ctx), ctx.params.id, {
        name: field(form, 'name') ?? 'drafts',
        kind: 'mail',
        permissions: ['mail:draft'],
        expiresAt: expiresOn ? `${expiresOn}T23:59:59Z` : null,
      });
      await keysPage(
        ctx,
        html`<section class="card"><p class="notice good">The draft key is ready. Copy it now: it is shown only once.</p>
<code class="secret">${key.apiKey}</code>
<p>The agent writes drafts with <code>POST ${deps.baseUrl()}/api/v1/agent/drafts</code> and this key; they wait under <a href="/drafts">Drafts</a>.</p></section>`,
        201,
      );
    } catch (error) {
      if (!isAppError(error) || !['invalid_input', 'conflict'].includes(error.code)) throw error;
      await keysPage(ctx, notice(error.message, 'bad'), HTTP_STATUS_OF[error.code]);
    }
  });
  router.post('/agents/:id/keys/:keyId/revoke', requireSignedIn, async (ctx) => {
    const form = await readForm(deps, ctx);
    try {
      await ownerViews.revokeKey(ownerOf(ctx), ctx.params.id, ctx.params.keyId, field(form, 'factorCode'));
    } catch (error) {
      if (!isAppError(error) || !['forbidden', 'rate_limited'].includes(error.code)) throw error;
      return await keysPage(ctx, notice(error.message, 'bad'), HTTP_STATUS_OF[error.code]);
    }
    ctx.status = 303;
    ctx.redirect(`/agents/${segment(ctx.params.id)}/keys`);
  });
};
