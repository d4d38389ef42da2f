import type { Router } from '@koa/router';
import type { Context } from 'koa';
import { HTTP_STATUS_OF, isAppError } from '../../core/errors.js';
import { isSecureBase, sessionCookie } from '../../core/owner-cookie.js';
import { badge, notice } from '../components.js';
import { ownerOf, type ConsoleDeps } from '../context.js';
import { field, readForm } from '../forms.js';
import { html, type Html } from '../html.js';
import { renderPage } from '../layout.js';
import { csrfField, requireSignedIn } from '../session.js';

/** The owner's own settings: password and two-factor. */
export const settingsPages = (router: Router, deps: ConsoleDeps): void => {
  const { owners } = deps.services;

  const page = async (ctx: Context, top: Html = html``, status = 200) => {
    const me = await owners.me(ownerOf(ctx));
    const factor =
      me.twoFactor === 'enabled'
        ? html`<form method="post" action="/settings/2fa" class="stack">${csrfField(deps, ctx)}<input type="hidden" name="action" value="disable">
<label>A current code, to turn it off <input type="text" name="factorCode" inputmode="numeric" pattern="[0-9]{6}" required></label><button type="submit" class="danger">Turn two-factor off</button></form>`
        : html`${
            me.twoFactor === 'pending'
              ? html`<form method="post" action="/settings/2fa" class="stack">${csrfField(deps, ctx)}<input type="hidden" name="action" value="confirm">
<label>The code your app shows now <input type="text" name="factorCode" inputmode="numeric" pattern="[0-9]{6}" required></label><button type="submit">Confirm</button></form>`
              : ''
          }
<form method="post" action="/settings/2fa">${csrfField(deps, ctx)}<input type="hidden" name="action" value="enroll"><button type="submit" class="secondary">${me.twoFactor === 'pending' ? 'Start over' : 'Set up two-factor'}</button></form>`;
    renderPage(deps, ctx, {
      title: 'Settings',
      active: 'settings',
      status,
      body: html`${top}<div class="grid">
<section class="card"><h2>Account</h2><dl class="facts"><dt>Login</dt><dd>${me.email}</dd><dt>Mailbox</dt><dd>${me.address}</dd></dl></section>
<section class="card"><h2>Password</h2><form method="post" action="/settings/password" class="stack">${csrfField(deps, ctx)}
<label>Current password <input type="password" name="currentPassword" autocomplete="current-password" required></label>
<label>New password (at least 12 characters) <input type="password" name="newPassword" autocomplete="new-password" minlength="12" required></label>
<button type="submit">Change it</button><p class="muted">This signs you out everywhere else.</p></form></section>
<section class="card"><h2>Two-factor ${badge(me.twoFactor)}</h2>${factor}</section>
</div>`,
    });
  };

  router.get('/settings', requireSignedIn, (ctx) => page(ctx));
  router.post('/settings/password', requireSignedIn, async (ctx) => {
    const form = await readForm(deps, ctx);
    try {
      const renewed = await owners.changePassword(ownerOf(ctx), form.get('currentPassword') ?? '', form.get('newPassword') ?? '');
      ctx.append('Set-Cookie', sessionCookie(renewed.cookie.value, renewed.cookie.expiresAt, isSecureBase(deps.baseUrl())));
      ctx.status = 303;
      ctx.redirect('/settings');
    } catch (error) {
      if (!isAppError(error) || !['invalid_input', 'forbidden'].includes(error.code)) throw error;
      await page(ctx, notice(error.message, 'bad'), HTTP_STATUS_OF[error.code]);
    }
  });
  router.post('/settings/2fa', requireSignedIn, async (ctx) => {
    const form = await readForm(deps, ctx);
    const action = form.get('action');
    if (action !== 'enroll' && action !== 'confirm' && action !== 'disable') return await page(ctx, notice('Unknown action.', 'bad'), 400);
    try {
      const result = await owners.twoFactorAction(ownerOf(ctx), action, field(form, 'factorCode'));
      const seed = result.otpauthUrl ? new URL(result.otpauthUrl).searchParams.get('secret') : null;
      await page(
        ctx,
        result.otpauthUrl
          ? html`<section class="card"><p class="notice good">Add this to your authenticator app (shown once), then confirm with a code.</p>
<code class="secret">${result.otpauthUrl}</code><p>Or type the key: <code>${seed}</code></p></section>`
          : notice(`Two-factor is ${result.status} now.`),
      );
    } catch (error) {
      if (!isAppError(error) || !['forbidden', 'conflict', 'rate_limited'].includes(error.code)) throw error;
      await page(ctx, notice(error.message, 'bad'), HTTP_STATUS_OF[error.code]);
    }
  });
};
