import { randomBytes } from 'node:crypto';
import type { Context, Next } from 'koa';
import { cookieName, isSecureBase, readCookie, SESSION_COOKIE, setCookie, VISITOR_COOKIE } from '../core/owner-cookie.js';
import type { ConsoleDeps } from './context.js';
import { stateOf } from './context.js';
import { html, type Html } from './html.js';

/** Raised by a page to answer with an error page of this status. */
export class PageError extends Error {
  constructor(
    readonly status: number,
    message: string,
  ) {
    super(message);
  }
}

/**
 * Who is asking: the owner of the session cookie, else a visitor with a visitor cookie (set
 * here when missing), so that every form, the sign-in form too, carries a token bound to
 * something this browser holds (OWASP's synchronizer token pattern, stateless by HMAC).
 */
export const consoleSession =
  (deps: ConsoleDeps) =>
  async (ctx: Context, next: Next): Promise<void> => {
    const secure = isSecureBase(deps.baseUrl());
    const cookies = ctx.get('cookie');
    const sessionValue = readCookie(cookies, cookieName(SESSION_COOKIE, secure));
    const owner = sessionValue ? await deps.services.ownerSessions.fromCookie(sessionValue) : null;
    let visitor = readCookie(cookies, cookieName(VISITOR_COOKIE, secure));
    if (!owner && (!visitor || !/^[A-Za-z0-9_-]{22,64}$/.test(visitor))) {
      visitor = randomBytes(24).toString('base64url');
      ctx.append('Set-Cookie', setCookie(VISITOR_COOKIE, visitor, secure));
    }
    const state = stateOf(ctx);
    state.owner = owner;
    state.binding = owner ? `session:${owner.sessionId}` : `visitor:${visitor}`;
    await next();
  };

/** Signed-in pages: a visitor is sent to sign in (GET) or refused (anything else). */
export const requireSignedIn = async (ctx: Context, next: Next): Promise<void> => {
  if (stateOf(ctx).owner) return next();
  if (ctx.method !== 'GET') throw new PageError(401, 'Your session ended. Sign in again.');
  ctx.status = 303;
  ctx.redirect('/sign-in');
};

/** The hidden field every form carries. */
export const csrfField = (deps: ConsoleDeps, ctx: Context): Html =>
  html`<input type="hidden" name="_csrf" value="${deps.services.ownerSessions.tokens.formToken(stateOf(ctx).binding)}">`;

/**
 * Every form POST: the token must match this browser's binding, and a browser that says the
 * request comes from another site (Sec-Fetch-Site, Fetch Metadata) is refused as well.
 */
export const checkCsrf = (deps: ConsoleDeps, ctx: Context, form: URLSearchParams): void => {
  const crossSite = ctx.get('sec-fetch-site') === 'cross-site';
  const valid = deps.services.ownerSessions.tokens.checkFormToken(stateOf(ctx).binding, form.get('_csrf') ?? undefined);
  if (crossSite || !valid) throw new PageError(403, 'This form has expired or did not come from this console. Go back, reload the page and try again.');
};
