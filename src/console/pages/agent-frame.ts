import type { Context } from 'koa';
import type { AddressEntry } from '../../core/types.js';
import type { AgentSummary } from '../../services/owners/ownership.js';
import { html, segment, type Html } from '../html.js';
import { setPageHeaders } from '../layout.js';

/** The tabs of one account's pages; keys and webhooks exist for agents only. */
export const agentTabs = (agent: AgentSummary, active: string): Html => {
  const base = `/agents/${segment(agent.id)}`;
  const tabs: [string, string, string][] = [
    ['overview', base, 'Overview'],
    ['inbox', `${base}/inbox`, 'Mail'],
    ['outbound', `${base}/outbound`, 'Outbound'],
  ];
  if (agent.kind === 'agent') tabs.push(['webhooks', `${base}/webhooks`, 'Webhooks'], ['keys', `${base}/keys`, 'Keys']);
  return html`<p class="muted">${agent.kind === 'human' ? 'Your own mailbox' : agent.agentId} · ${agent.email}</p>
<nav class="tabs">${tabs.map(([key, href, label]) => html`<a href="${href}"${key === active ? html` aria-current="page"` : ''}>${label}</a>`)}</nav>`;
};

export const addresses = (entries: readonly AddressEntry[] | undefined): string =>
  (entries ?? []).map((entry) => (entry.name ? `${entry.name} <${entry.email}>` : entry.email)).join(', ');

/**
 * The policy of a mail or draft HTML body served into the console's iframe. `sandbox` (no
 * allow-same-origin, no allow-scripts) gives the document an opaque origin of its own even if
 * opened directly, so it is never on the console's origin, and runs no script; nothing
 * remote loads (default-src 'none'; images only inline data:), no form goes anywhere, only
 * the console may frame it. The sandbox also blocks meta refresh (HTML, "sandboxed automatic
 * features browsing context flag").
 */
export const BODY_CSP =
  "sandbox; default-src 'none'; img-src data:; style-src 'unsafe-inline'; font-src data:; form-action 'none'; base-uri 'none'; frame-ancestors 'self'";

/** Answers an untrusted HTML body for the sandboxed frame. */
export const sendBodyFrame = (ctx: Context, body: string): void => {
  setPageHeaders(ctx, BODY_CSP);
  ctx.set('X-Frame-Options', 'SAMEORIGIN');
  ctx.type = 'text/html; charset=utf-8';
  ctx.body = body;
};

/** The frame that shows an untrusted HTML body: sandboxed with no permission at all. */
export const bodyFrame = (src: string, title: string): Html =>
  html`<iframe class="mail" sandbox="" referrerpolicy="no-referrer" src="${src}" title="${title}"></iframe>`;
