import { Router } from '@koa/router';
import type { Context, Middleware, Next } from 'koa';
import { HTTP_STATUS_OF, isAppError } from '../core/errors.js';
import { CONSOLE_CSS, FAVICON_SVG } from './assets.js';
import type { ConsoleDeps } from './context.js';
import { html } from './html.js';
import { renderPage } from './layout.js';
import { PAGES } from './pages/index.js';
import { consoleSession, PageError } from './session.js';

export type { ConsoleDeps } from './context.js';

/**
 * The owner console: server-rendered pages on the HTTP listener (src/app/adapters.ts hands this
 * middleware to the HTTP adapter, which never imports it). It answers only the paths its router
 * knows; everything else (the API, MCP) passes through untouched.
 */
export const createConsole = (deps: ConsoleDeps): Middleware => {
  const router = new Router();
  router.get('/assets/console.css', (ctx) => {
    ctx.type = 'text/css; charset=utf-8';
    ctx.body = CONSOLE_CSS;
  });
  // /favicon.ico too: browsers and tools ask for it there whatever the page names.
  router.get(['/favicon.svg', '/favicon.ico'], (ctx) => {
    ctx.type = 'image/svg+xml';
    ctx.set('Cache-Control', 'public, max-age=86400');
    ctx.body = FAVICON_SVG;
  });
  for (const register of PAGES) register(router, deps);
  const routes = router.routes() as Middleware;
  const session = consoleSession(deps);
  return async (ctx: Context, next: Next) => {
    if (!router.match(ctx.path, ctx.method).route) return next();
    try {
      await session(ctx, () => routes(ctx, next));
    } catch (error) {
      errorPage(deps, ctx, error);
    }
  };
};

const errorPage = (deps: ConsoleDeps, ctx: Context, error: unknown): void => {
  let status = 500;
  let message = 'Something went wrong on our side. Try again in a moment.';
  if (error instanceof PageError) {
    status = error.status;
    message = error.message;
  } else if (isAppError(error)) {
    status = HTTP_STATUS_OF[error.code];
    message = error.message;
    if (error.details.retryAfterSeconds !== undefined) ctx.set('Retry-After', String(error.details.retryAfterSeconds));
  } else {
    deps.logger.error('console page failed', {
      method: ctx.method,
      path: ctx.path,
      error: error instanceof Error ? (error.stack ?? error.message) : String(error),
    });
  }
  renderPage(deps, ctx, {
    title: status === 404 ? 'Not found' : status === 403 ? 'Not allowed' : 'That did not work',
    status,
    body: html`<div class="card"><p>${message}</p><p><a href="/">Back to your agents</a></p></div>`,
  });
};
