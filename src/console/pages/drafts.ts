import type { Router } from '@koa/router';
import type { Context } from 'koa';
import { HTTP_STATUS_OF, isAppError } from '../../core/errors.js';
import { validateInput } from '../../core/validate.js';
import type { DraftFilter } from '../../services/owners/approvals.js';
import type { SendRequest } from '../../services/sending/send-input.js';
import { badge, empty, notice, table, timeOf } from '../components.js';
import { ownerOf, type ConsoleDeps } from '../context.js';
import { field, readForm } from '../forms.js';
import { html, segment } from '../html.js';
import { renderPage } from '../layout.js';
import { csrfField, requireSignedIn } from '../session.js';
import { bodyFrame, sendBodyFrame } from './agent-frame.js';

const FILTERS: [DraftFilter, string][] = [
  ['open', 'Waiting'],
  ['sent', 'Sent'],
  ['rejected', 'Rejected'],
  ['all', 'All'],
];
const list = (value: SendRequest['to'] | undefined): string => (value === undefined ? '' : Array.isArray(value) ? value.join(', ') : value);

/** Drafts of the owner's agents: the list, one draft, approve and reject. */
export const draftPages = (router: Router, deps: ConsoleDeps): void => {
  const { approvals } = deps.services;
  const tz = deps.timeZone;

  router.get('/drafts', requireSignedIn, async (ctx) => {
    const { status } = validateInput<{ status: DraftFilter }>('owner-drafts-query.json', { ...ctx.query }, { coerce: true });
    const { drafts } = await approvals.list(ownerOf(ctx), status);
    const rows = drafts.map(
      (draft) => html`<tr><td><a href="/drafts/${segment(draft.id)}">${draft.subject || '(no subject)'}</a></td>
<td>${draft.agent?.agentId}</td><td class="num">${draft.recipientCount}</td><td>${timeOf(draft.updatedAt, tz)}</td><td>${badge(draft.status)}</td></tr>`,
    );
    renderPage(deps, ctx, {
      title: 'Drafts',
      active: 'drafts',
      body: html`<nav class="tabs">${FILTERS.map(([key, label]) => html`<a href="/drafts?status=${key}"${key === status ? html` aria-current="page"` : ''}>${label}</a>`)}</nav>
${rows.length === 0 ? empty(status === 'open' ? 'No drafts are waiting for you.' : 'No drafts here.') : table(['Subject', 'Agent', 'Recipients', 'Updated', 'Status'], rows)}`,
    });
  });

  const draftPage = async (ctx: Context, message?: string, status = 200) => {
    const draft = await approvals.get(ownerOf(ctx), ctx.params.id);
    const { message: request } = draft;
    const base = `/drafts/${segment(draft.id)}`;
    const hasHtml = typeof request.html === 'string' && request.html !== '';
    const showHtml = hasHtml && ctx.query.view !== 'text';
    const decision = draft.decision;
    renderPage(deps, ctx, {
      title: draft.subject || '(no subject)',
      active: 'drafts',
      status,
      body: html`${notice(message, 'bad')}
<section class="card"><dl class="facts">
<dt>From</dt><dd><a href="/agents/${segment(draft.agent.id)}">${draft.agent.agentId}</a> (${draft.agent.email})</dd>
<dt>To</dt><dd>${list(request.to)}</dd>${request.cc ? html`<dt>Cc</dt><dd>${list(request.cc)}</dd>` : ''}${request.bcc ? html`<dt>Bcc</dt><dd>${list(request.bcc)}</dd>` : ''}
${request.replyTo ? html`<dt>Reply-To</dt><dd>${list(request.replyTo)}</dd>` : ''}
<dt>Status</dt><dd>${badge(draft.status)}</dd><dt>Written</dt><dd>${timeOf(draft.createdAt, tz)}, changed ${timeOf(draft.updatedAt, tz)}</dd>
${decision ? html`<dt>Decision</dt><dd>${decision.outcome} by ${decision.by.email ?? decision.by.id}, ${timeOf(decision.at, tz)}${decision.reason ? html`: ${decision.reason}` : ''}</dd>` : ''}
${draft.outboundId ? html`<dt>Outcome</dt><dd><a href="/agents/${segment(draft.agent.id)}/outbound/${segment(draft.outboundId)}">See the recipients' outcomes</a></dd>` : ''}
${request.attachments?.length ? html`<dt>Attachments</dt><dd>${request.attachments.map((item) => html`${item.filename}<br>`)}</dd>` : ''}
</dl></section>
${hasHtml ? html`<p>${showHtml ? html`Showing the HTML, sandboxed. <a href="${base}?view=text">Show text</a>` : html`<a href="${base}">Show HTML</a>`}</p>` : ''}
${showHtml ? bodyFrame(`${base}/body`, 'The draft, as HTML') : html`<pre class="body">${request.text ?? request.body ?? ''}</pre>`}
${
  draft.status === 'pending' || draft.status === 'approving'
    ? html`<div class="grid">
<form method="post" action="${base}/approve" class="card stack">${csrfField(deps, ctx)}<input type="hidden" name="version" value="${draft.version}"><p>Sending uses the agent's credits and limits.</p><button type="submit">Approve and send</button></form>
${draft.status === 'pending' ? html`<form method="post" action="${base}/reject" class="card stack">${csrfField(deps, ctx)}<label>Reason for the agent (optional) <input type="text" name="reason" maxlength="1000"></label><button type="submit" class="danger">Reject</button></form>` : ''}
</div>`
    : ''
}`,
    });
  };

  router.get('/drafts/:id', requireSignedIn, (ctx) => draftPage(ctx));
  router.get('/drafts/:id/body', requireSignedIn, async (ctx) => {
    sendBodyFrame(ctx, (await approvals.get(ownerOf(ctx), ctx.params.id)).message.html ?? '');
  });
  router.post('/drafts/:id/approve', requireSignedIn, async (ctx) => {
    const form = await readForm(deps, ctx);
    try {
      // The version this page showed: a draft changed since is shown again, not sent.
      const { draft } = await approvals.approve(ownerOf(ctx), ctx.params.id, field(form, 'version') ?? '');
      ctx.status = 303;
      ctx.redirect(`/agents/${segment(draft.agent.id)}/outbound/${segment(draft.outboundId ?? '')}`);
    } catch (error) {
      if (!isAppError(error) || error.code === 'not_found' || error.code === 'unavailable') throw error;
      await draftPage(ctx, `Not sent: ${error.message}`, HTTP_STATUS_OF[error.code]);
    }
  });
  router.post('/drafts/:id/reject', requireSignedIn, async (ctx) => {
    const form = await readForm(deps, ctx);
    try {
      await approvals.reject(ownerOf(ctx), ctx.params.id, field(form, 'reason'));
    } catch (error) {
      if (!isAppError(error) || error.code !== 'conflict') throw error;
      return await draftPage(ctx, error.message, 409);
    }
    ctx.status = 303;
    ctx.redirect(`/drafts/${segment(ctx.params.id)}`);
  });
};
