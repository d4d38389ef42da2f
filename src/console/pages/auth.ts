import type { Router } from '@koa/router';
import type { Context } from 'koa';
import { isAppError } from '../../core/errors.js';
import { clearedSessionCookie, isSecureBase, sessionCookie } from '../../core/owner-cookie.js';
import { clientAddress } from '../../core/client-ip.js';
import type { SignedIn } from '../../services/owners/sessions.js';
import { notice } from '../components.js';
import { ownerOf, stateOf, type ConsoleDeps } from '../context.js';
import { field, readForm } from '../forms.js';
import { html } from '../html.js';
import { renderPage } from '../layout.js';
import { csrfField, requireSignedIn } from '../session.js';

const MESSAGES: Record<string, string> = {
  'signed-up': 'If this email was free, its account exists now: sign in with it.',
  'signed-out': 'You are signed out.',
};

/** Sign-in, sign-up (open mode), the one-time password link, sign-out. */
export const authPages = (router: Router, deps: ConsoleDeps): void => {
  const { services } = deps;
  const secure = () => isSecureBase(deps.baseUrl());
  const ip = (ctx: Context) => clientAddress(ctx.get('x-forwarded-for'), ctx.req.socket.remoteAddress, deps.trustProxy);
  const signedIn = (ctx: Context, result: SignedIn) => {
    ctx.append('Set-Cookie', sessionCookie(result.cookie.value, result.cookie.expiresAt, secure()));
    ctx.status = 303;
    ctx.redirect('/');
  };

  const signInPage = (ctx: Context, message?: { text: string; tone: 'good' | 'bad' }, status = 200) =>
    renderPage(deps, ctx, {
      title: 'Sign in',
      status,
      body: html`${notice(message?.text, message?.tone)}
<form method="post" action="/sign-in" class="stack card">${csrfField(deps, ctx)}
<label>Email <input type="email" name="email" autocomplete="username" required></label>
<label>Password <input type="password" name="password" autocomplete="current-password" required></label>
<label>Two-factor code (if you turned it on) <input type="text" name="factorCode" inputmode="numeric" autocomplete="one-time-code" pattern="[0-9]{6}"></label>
<button type="submit">Sign in</button>
</form>
${services.owners.signupMode === 'open' ? html`<p>No account yet? <a href="/sign-up">Sign up</a>.</p>` : html`<p class="muted">Accounts are made by the operator of this service.</p>`}`,
    });

  router.get('/sign-in', (ctx) => {
    if (stateOf(ctx).owner) return ctx.redirect('/');
    const done = MESSAGES[String(ctx.query.done ?? '')];
    signInPage(ctx, done ? { text: done, tone: 'good' } : undefined);
  });
  router.post('/sign-in', async (ctx) => {
    const form = await readForm(deps, ctx);
    try {
      signedIn(
        ctx,
        await services.ownerSessions.signIn(
          { email: form.get('email') ?? '', password: form.get('password') ?? '', factorCode: field(form, 'factorCode') },
          ip(ctx),
        ),
      );
    } catch (error) {
      if (!isAppError(error) || !['unauthorized', 'forbidden', 'rate_limited'].includes(error.code)) throw error;
      signInPage(ctx, { text: error.message, tone: 'bad' }, error.code === 'rate_limited' ? 429 : error.code === 'forbidden' ? 403 : 401);
    }
  });

  const signUpPage = (ctx: Context, error?: string, status = 200) =>
    renderPage(deps, ctx, {
      title: 'Sign up',
      status,
      body:
        services.owners.signupMode !== 'open'
          ? html`<div class="card"><p>Sign-up is by invitation here: ask the operator of this service for an account.</p></div>`
          : html`${notice(error, 'bad')}
<form method="post" action="/sign-up" class="stack card">${csrfField(deps, ctx)}
<label>Email (your login name; nothing is mailed to it) <input type="email" name="email" autocomplete="username" required></label>
<label>Password (at least 12 characters) <input type="password" name="password" autocomplete="new-password" minlength="12" required></label>
<button type="submit">Sign up</button>
</form>`,
    });
  router.get('/sign-up', (ctx) => signUpPage(ctx));
  router.post('/sign-up', async (ctx) => {
    const form = await readForm(deps, ctx);
    try {
      await services.owners.signup({ email: form.get('email') ?? '', password: form.get('password') ?? '' }, ip(ctx));
    } catch (error) {
      if (!isAppError(error) || !['invalid_input', 'forbidden', 'rate_limited'].includes(error.code)) throw error;
      return signUpPage(ctx, error.message, error.code === 'invalid_input' ? 400 : error.code === 'forbidden' ? 403 : 429);
    }
    ctx.status = 303;
    ctx.redirect('/sign-in?done=signed-up');
  });

  const passwordPage = async (ctx: Context, token: string, error?: string, status = 200) =>
    renderPage(deps, ctx, {
      title: 'Choose your password',
      status,
      body: !(await services.owners.linkIsUsable(token))
        ? html`<div class="card"><p>This link was used or has expired. Ask the operator for a new one.</p></div>`
        : html`${notice(error, 'bad')}
<form method="post" action="/set-password/${token}" class="stack card">${csrfField(deps, ctx)}
<label>New password (at least 12 characters) <input type="password" name="password" autocomplete="new-password" minlength="12" required></label>
<button type="submit">Set password and sign in</button>
</form>`,
    });
  router.get('/set-password/:token', (ctx) => passwordPage(ctx, ctx.params.token));
  router.post('/set-password/:token', async (ctx) => {
    const form = await readForm(deps, ctx);
    try {
      signedIn(ctx, await services.owners.setPasswordWithLink(ctx.params.token, form.get('password') ?? ''));
    } catch (error) {
      if (!isAppError(error) || !['invalid_input', 'not_found'].includes(error.code)) throw error;
      await passwordPage(ctx, ctx.params.token, error.message, error.code === 'not_found' ? 404 : 400);
    }
  });

  router.post('/sign-out', requireSignedIn, async (ctx) => {
    await readForm(deps, ctx);
    await services.ownerSessions.signOut(ownerOf(ctx));
    ctx.append('Set-Cookie', clearedSessionCookie(secure()));
    ctx.status = 303;
    ctx.redirect('/sign-in?done=signed-out');
  });
};
