import type { Router } from '@koa/router';
import { validateInput } from '../../core/validate.js';
import { badge, empty, table, timeOf } from '../components.js';
import { ownerOf, type ConsoleDeps } from '../context.js';
import { html, segment } from '../html.js';
import { renderPage } from '../layout.js';
import { requireSignedIn } from '../session.js';
import { agentTabs } from './agent-frame.js';

/** What an account sent and how it went, and (agents) its webhook deliveries. */
export const agentActivityPages = (router: Router, deps: ConsoleDeps): void => {
  const { ownerViews } = deps.services;
  const tz = deps.timeZone;

  router.get('/agents/:id/outbound', requireSignedIn, async (ctx) => {
    const owner = ownerOf(ctx);
    const agent = await ownerViews.agent(owner, ctx.params.id);
    const query = validateInput<{ before?: string }>('outbound-query.json', { ...ctx.query }, { coerce: true });
    const page = await ownerViews.outbound(owner, agent.id, query.before);
    const base = `/agents/${segment(agent.id)}/outbound`;
    const rows = page.submissions.map(
      (item) => html`<tr><td><a href="${base}/${segment(item.id)}">${item.subject || '(no subject)'}</a></td>
<td>${timeOf(item.createdAt, tz)}</td><td class="num">${item.recipientCount ?? ''}</td>
<td>${item.tracked ? Object.entries(item.statusCounts ?? {}).map(([status, count]) => html`${badge(status)} ${count} `) : html`<span class="muted">untracked</span>`}</td></tr>`,
    );
    renderPage(deps, ctx, {
      title: agent.kind === 'human' ? 'Your mailbox' : agent.agentId,
      active: 'agents',
      body: html`${agentTabs(agent, 'outbound')}
${rows.length === 0 ? empty('Nothing sent yet.') : table(['Subject', 'Sent', 'Recipients', 'Outcomes'], rows)}
${page.nextCursor ? html`<p><a href="${base}?before=${segment(page.nextCursor)}">Older</a></p>` : ''}`,
    });
  });

  router.get('/agents/:id/outbound/:outboundId', requireSignedIn, async (ctx) => {
    const owner = ownerOf(ctx);
    const agent = await ownerViews.agent(owner, ctx.params.id);
    const detail = await ownerViews.outboundDetail(owner, agent.id, ctx.params.outboundId.toLowerCase());
    const recipients = (detail.recipients ?? []).map(
      (item) => html`<tr><td>${item.email}</td><td>${item.kind}</td><td>${badge(item.status)}</td>
<td class="num">${item.attempts}</td><td>${[item.smtpCode, item.enhancedCode, item.diagnostic].filter(Boolean).join(' ')}${item.creditRefunded ? ' (credit refunded)' : ''}</td><td>${timeOf(item.updatedAt, tz)}</td></tr>`,
    );
    const events = (detail.events ?? []).map(
      (item) =>
        html`<tr><td>${timeOf(item.at, tz)}</td><td>${item.email}</td><td>${badge(item.status)}</td><td>${[item.smtpCode, item.enhancedCode, item.diagnostic].filter(Boolean).join(' ')}</td></tr>`,
    );
    renderPage(deps, ctx, {
      title: detail.subject || '(no subject)',
      active: 'agents',
      body: html`${agentTabs(agent, 'outbound')}
<section class="card"><dl class="facts"><dt>Sent</dt><dd>${timeOf(detail.createdAt, tz)}</dd><dt>Message-ID</dt><dd>${detail.messageId}</dd>
${detail.via ? html`<dt>Via</dt><dd>${detail.via}</dd>` : ''}</dl></section>
<h2>Recipients</h2>
${detail.tracked ? table(['Recipient', 'Kind', 'Outcome', 'Attempts', 'Last answer', 'Updated'], recipients) : empty('This submission is older than the tracking window.')}
${events.length > 0 ? html`<h2>History</h2>${table(['When', 'Recipient', 'State', 'Answer'], events)}` : ''}`,
    });
  });

  router.get('/agents/:id/webhooks', requireSignedIn, async (ctx) => {
    const owner = ownerOf(ctx);
    const agent = await ownerViews.agent(owner, ctx.params.id);
    const { webhooks } = await ownerViews.webhooks(owner, agent.id);
    const query = validateInput<{ before?: string }>('webhook-deliveries-query.json', { ...ctx.query }, { coerce: true });
    const page = await ownerViews.deliveries(owner, agent.id, query.before);
    const rows = page.deliveries.map(
      (item) => html`<tr><td>${item.type}</td><td>${timeOf(item.createdAt, tz)}</td><td>${badge(item.status)}</td>
<td class="num">${item.attempts}</td><td>${item.lastHttpStatus ?? ''} ${item.lastError ?? ''}</td></tr>`,
    );
    renderPage(deps, ctx, {
      title: agent.agentId,
      active: 'agents',
      body: html`${agentTabs(agent, 'webhooks')}
<section class="card">${
        webhooks.length === 0
          ? empty('No webhook endpoint.')
          : webhooks.map(
              (hook) => html`<dl class="facts"><dt>URL</dt><dd>${hook.url}</dd>
<dt>Status</dt><dd>${badge(hook.status)}${hook.pausedReason ? ` ${hook.pausedReason}` : ''}</dd><dt>Events</dt><dd>${hook.events.join(', ')}</dd></dl>`,
            )
      }</section>
<h2>Deliveries (30 days)</h2>
${rows.length === 0 ? empty('No deliveries.') : table(['Event', 'Observed', 'Status', 'Attempts', 'Last answer'], rows)}
${page.nextCursor ? html`<p><a href="/agents/${segment(agent.id)}/webhooks?before=${segment(page.nextCursor)}">Older</a></p>` : ''}`,
    });
  });
};
