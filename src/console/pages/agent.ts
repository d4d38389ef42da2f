import type { Router } from '@koa/router';
import { isAppError } from '../../core/errors.js';
import { validateInput } from '../../core/validate.js';
import type { ListQuery } from '../../services/mail/mailbox.js';
import { badge, bytes, empty, table, timeOf, usageChart, usageMeter } from '../components.js';
import { ownerOf, type ConsoleDeps } from '../context.js';
import { html, segment } from '../html.js';
import { renderPage } from '../layout.js';
import { requireSignedIn } from '../session.js';
import { addresses, agentTabs, bodyFrame, sendBodyFrame } from './agent-frame.js';
import { junkFacts, junkForm } from './agent-junk.js';

const FOLDERS = ['INBOX', 'Junk', 'Sent', 'Drafts'];
const PAGE = 25;

/** One account the owner may see: overview, mail (read-only), one message and its HTML frame. */
export const agentPages = (router: Router, deps: ConsoleDeps): void => {
  const { ownerViews } = deps.services;
  const tz = deps.timeZone;

  router.get('/agents/:id', requireSignedIn, async (ctx) => {
    const view = await ownerViews.overview(ownerOf(ctx), ctx.params.id);
    const { agent, sending } = view;
    renderPage(deps, ctx, {
      title: agent.kind === 'human' ? 'Your mailbox' : agent.agentId,
      active: 'agents',
      body: html`${agentTabs(agent, 'overview')}
<div class="grid">
<section class="card"><h2>Account</h2><dl class="facts">
<dt>Address</dt><dd>${agent.email}</dd><dt>Credits</dt><dd>${agent.credits}</dd>
<dt>Account</dt><dd>${badge(agent.accountStatus)}</dd><dt>Two-factor</dt><dd>${badge(view.twoFactor)}</dd>
<dt>Since</dt><dd>${timeOf(agent.createdAt, tz)}</dd></dl></section>
<section class="card"><h2>Sending</h2><dl class="facts">
<dt>State</dt><dd>${badge(sending.state)}</dd>
<dt>Today</dt><dd>${usageMeter(sending.usage.recipientsToday, sending.limits.recipientsPerDay)}</dd>
${sending.shared ? html`<dt>Shared</dt><dd>${usageMeter(sending.shared.recipientsToday, sending.shared.recipientsPerDay)} <span class="muted">across your ${sending.shared.accounts} accounts</span></dd>` : ''}
<dt>Per minute</dt><dd>${sending.limits.recipientsPerMinute} recipients</dd>
${sending.review.reason ? html`<dt>Note</dt><dd>${sending.review.reason}</dd>` : ''}</dl></section>
</div>
<section class="card">${usageChart(view.recipientsByDay, sending.limits.recipientsPerDay)}</section>`,
    });
  });

  router.get('/agents/:id/inbox', requireSignedIn, async (ctx) => {
    const query = validateInput<ListQuery>(
      'inbox-query.json',
      { folder: ctx.query.folder ?? 'INBOX', offset: ctx.query.offset ?? 0, limit: PAGE },
      { coerce: true },
    );
    const owner = ownerOf(ctx);
    const agent = await ownerViews.agent(owner, ctx.params.id);
    // A folder not made yet (Drafts before the first draft) shows as empty.
    const page = await ownerViews.inbox(owner, agent.id, query).catch((error: unknown) => {
      if (isAppError(error) && error.code === 'not_found') return null;
      throw error;
    });
    const base = `/agents/${segment(agent.id)}`;
    const folder = page?.folder ?? query.folder;
    // In Junk, each message can be judged not junk: it goes to INBOX and the agent's filter learns from it.
    const action = (id: string) => (folder === 'Junk' ? html`<td>${junkForm(deps, ctx, agent.id, folder, id, false)}</td>` : '');
    const rows = (page?.emails ?? []).map(
      (
        mail,
      ) => html`<tr><td>${mail.isRead ? '' : html`<span class="badge info">new</span> `}<a href="${base}/mail/${segment(folder)}/${mail.id}">${mail.subject || '(no subject)'}</a>
<br><span class="muted">${mail.preview.slice(0, 120)}</span></td><td>${addresses(mail.from ? [mail.from] : [])}</td><td>${timeOf(mail.date, tz)}</td><td class="num">${mail.attachments.length > 0 ? `${mail.attachments.length} 📎` : ''}</td>${action(mail.id)}</tr>`,
    );
    const next =
      page && query.offset + PAGE < page.totalMessages
        ? html`<a href="${base}/inbox?folder=${segment(query.folder)}&amp;offset=${query.offset + PAGE}">Older</a>`
        : '';
    renderPage(deps, ctx, {
      title: agent.kind === 'human' ? 'Your mailbox' : agent.agentId,
      active: 'agents',
      body: html`${agentTabs(agent, 'inbox')}
<nav class="tabs">${FOLDERS.map((folder) => html`<a href="${base}/inbox?folder=${segment(folder)}"${folder === query.folder ? html` aria-current="page"` : ''}>${folder}</a>`)}</nav>
${page === null || page.emails.length === 0 ? empty(`No messages in ${query.folder}.`) : table(['Subject', 'From', 'Date', '', ...(folder === 'Junk' ? [''] : [])], rows)}
<p>${page ? `${page.totalMessages} message(s). ` : ''}${next}</p>`,
    });
  });

  router.get('/agents/:id/mail/:folder/:uid', requireSignedIn, async (ctx) => {
    const owner = ownerOf(ctx);
    const agent = await ownerViews.agent(owner, ctx.params.id);
    const uid = validateInput<{ id: string }>('owner-email-query.json', { id: ctx.params.uid }).id;
    const mail = await ownerViews.email(owner, agent.id, ctx.params.folder, Number(uid));
    const base = `/agents/${segment(agent.id)}/mail/${segment(mail.folder)}/${uid}`;
    const showHtml = mail.html !== null && ctx.query.view !== 'text';
    renderPage(deps, ctx, {
      title: mail.subject || '(no subject)',
      active: 'agents',
      body: html`${agentTabs(agent, 'inbox')}
<section class="card"><dl class="facts">
<dt>From</dt><dd>${addresses(mail.from ? [mail.from] : [])}</dd><dt>To</dt><dd>${addresses(mail.to)}</dd>
${mail.cc.length > 0 ? html`<dt>Cc</dt><dd>${addresses(mail.cc)}</dd>` : ''}
<dt>Date</dt><dd>${timeOf(mail.date, tz)}</dd><dt>Folder</dt><dd>${mail.folder}</dd>
${junkFacts(mail.junkVerdict, mail.isJunk)}
${mail.attachments.length > 0 ? html`<dt>Attachments</dt><dd>${mail.attachments.map((item) => html`${item.filename ?? '(unnamed)'} (${item.contentType}, ${bytes(item.size)})<br>`)}</dd>` : ''}
</dl></section>
<p>${junkForm(deps, ctx, agent.id, mail.folder, uid, !mail.isJunk)}</p>
${mail.html !== null ? html`<p>${showHtml ? html`Showing the HTML part, sandboxed: no scripts, nothing loaded from elsewhere. <a href="${base}?view=text">Show text</a>` : html`<a href="${base}">Show HTML</a>`}</p>` : ''}
${showHtml ? bodyFrame(`${base}/body`, 'The message, as HTML') : html`<pre class="body">${mail.text}</pre>`}`,
    });
  });

  router.get('/agents/:id/mail/:folder/:uid/body', requireSignedIn, async (ctx) => {
    const uid = validateInput<{ id: string }>('owner-email-query.json', { id: ctx.params.uid }).id;
    const mail = await ownerViews.email(ownerOf(ctx), ctx.params.id, ctx.params.folder, Number(uid));
    sendBodyFrame(ctx, mail.html ?? '');
  });
};
