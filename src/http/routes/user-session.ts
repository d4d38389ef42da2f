import type { Router } from '@koa/router';
import type { Context } from 'koa';
import { clearedSessionCookie, isSecureBase, sessionCookie } from '../../core/owner-cookie.js';
import { validateInput } from '../../core/validate.js';
import type { SignedIn, SignInInput } from '../../services/owners/sessions.js';
import { readJsonBody } from '../body.js';
import { clientIp } from '../client-ip.js';
import type { HttpDeps } from '../context.js';
import { ownerOf, requireOwner } from '../owner-auth.js';

/** Credentials and codes only. */
const BODY_BYTES = 16 * 1024;

/** Owner sign-up, sign-in and sign-out, the owner's own account, password and 2FA. */
export const userSessionRoutes = (router: Router, deps: HttpDeps): void => {
  const { services } = deps;
  const owner = requireOwner(services.ownerSessions);
  const answerSession = (ctx: Context, signedIn: SignedIn): void => {
    ctx.append('Set-Cookie', sessionCookie(signedIn.cookie.value, signedIn.cookie.expiresAt, isSecureBase(deps.baseUrl())));
    ctx.body = { token: signedIn.token, expiresAt: signedIn.expiresAt, owner: signedIn.owner };
  };

  router.post('/api/user/signup', async (ctx) => {
    const input = validateInput<{ email: string; password: string }>('owner-signup-request.json', await readJsonBody(ctx, BODY_BYTES, deps.body.budget));
    ctx.body = await services.owners.signup(input, clientIp(ctx, deps.trustProxy));
  });
  router.post('/api/user/session', async (ctx) => {
    const input = validateInput<SignInInput>('owner-session-request.json', await readJsonBody(ctx, BODY_BYTES, deps.body.budget));
    answerSession(ctx, await services.ownerSessions.signIn(input, clientIp(ctx, deps.trustProxy)));
  });
  router.delete('/api/user/session', owner, async (ctx) => {
    await services.ownerSessions.signOut(ownerOf(ctx));
    ctx.append('Set-Cookie', clearedSessionCookie(isSecureBase(deps.baseUrl())));
    ctx.body = { signedOut: true };
  });
  router.get('/api/user/me', owner, async (ctx) => {
    ctx.body = await services.owners.me(ownerOf(ctx));
  });
  router.post('/api/user/password', owner, async (ctx) => {
    const input = validateInput<{ currentPassword: string; newPassword: string }>(
      'owner-password-request.json',
      await readJsonBody(ctx, BODY_BYTES, deps.body.budget),
    );
    answerSession(ctx, await services.owners.changePassword(ownerOf(ctx), input.currentPassword, input.newPassword));
  });
  router.post('/api/user/2fa', owner, async (ctx) => {
    const input = validateInput<{ action: 'enroll' | 'confirm' | 'disable'; factorCode?: string }>(
      'two-factor-request.json',
      await readJsonBody(ctx, BODY_BYTES, deps.body.budget),
    );
    ctx.body = await services.owners.twoFactorAction(ownerOf(ctx), input.action, input.factorCode);
  });
};
