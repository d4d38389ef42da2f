import type { Context } from 'koa';
import type { ConsoleDeps } from './context.js';
import { stateOf } from './context.js';
import { html, type Html } from './html.js';
import { csrfField } from './session.js';

/** The console's top navigation; later pages (invoices, health) add their entry here. */
export interface NavItem {
  key: string;
  href: string;
  label: string;
}

export const NAV: readonly NavItem[] = [
  { key: 'agents', href: '/', label: 'Agents' },
  { key: 'drafts', href: '/drafts', label: 'Drafts' },
  { key: 'billing', href: '/billing', label: 'Billing' },
  { key: 'domains', href: '/domains', label: 'Domains' },
  { key: 'health', href: '/health', label: 'Health' },
  { key: 'settings', href: '/settings', label: 'Settings' },
];

export interface PageOptions {
  title: string;
  body: Html;
  /** The NAV key to mark as current. */
  active?: string;
  status?: number;
  /** Reloads the page every so many seconds (a page that waits on something: the console runs no script). */
  refreshSeconds?: number;
}

/**
 * No script runs in the console, none inline (CSP without 'unsafe-inline' for scripts, none
 * at all), styles only from the console's own sheet, frames only from this origin (the
 * sandboxed mail view), never framed itself, forms only to itself.
 */
export const PAGE_CSP =
  "default-src 'none'; style-src 'self'; img-src 'self' data:; frame-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'";

export const setPageHeaders = (ctx: Context, csp: string): void => {
  ctx.set('Content-Security-Policy', csp);
  ctx.set('Referrer-Policy', 'no-referrer');
  ctx.set('Cross-Origin-Opener-Policy', 'same-origin');
  ctx.set('Cross-Origin-Resource-Policy', 'same-origin');
};

/** A whole page in the console's frame: header with navigation and sign-out, then the body. */
export const renderPage = (deps: ConsoleDeps, ctx: Context, options: PageOptions): void => {
  const signedIn = stateOf(ctx).owner !== null;
  setPageHeaders(ctx, PAGE_CSP);
  ctx.set('X-Frame-Options', 'DENY');
  ctx.status = options.status ?? 200;
  ctx.type = 'text/html; charset=utf-8';
  ctx.body = html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
${
  options.refreshSeconds
    ? html`<meta http-equiv="refresh" content="${options.refreshSeconds}">
`
    : ''
}<title>${options.title} · agentpost</title>
<link rel="icon" href="/favicon.svg" type="image/svg+xml">
<link rel="stylesheet" href="/assets/console.css">
</head>
<body>
<header class="top">
  <a class="brand" href="/">agentpost</a>
  ${
    signedIn
      ? html`<nav>${NAV.map((item) => html`<a href="${item.href}"${item.key === options.active ? html` aria-current="page"` : ''}>${item.label}</a>`)}</nav>
  <form method="post" action="/sign-out" class="inline">${csrfField(deps, ctx)}<button class="link" type="submit">Sign out</button></form>`
      : ''
  }
</header>
<main>
<h1>${options.title}</h1>
${options.body}
</main>
</body>
</html>
`.text;
};
