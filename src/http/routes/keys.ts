import type { Router } from '@koa/router';
import type { Context, Next } from 'koa';
import type { AccessKeyRequest } from '../../services/keys/access-keys.js';
import type { RotationAction } from '../../services/keys/key-rotation.js';
import type { TwoFactorAction } from '../../services/access/two-factor.js';
import { requireFullKey } from '../../services/access/auth.js';
import { principalOf, requireAuth } from '../auth.js';
import { readJsonBody } from '../body.js';
import type { HttpDeps } from '../context.js';

/** Small JSON bodies only: these requests carry an action, a policy or a code. */
const KEY_BODY_BYTES = 64 * 1024;

/** Key rotation, limited access keys and two-factor: full key only (the services check). */
export const keyRoutes = (router: Router, deps: HttpDeps): void => {
  const { services, validator } = deps;
  const authenticate = requireAuth(services.auth);
  // A limited key is refused (403) before its body is even validated.
  const auth = async (ctx: Context, next: Next): Promise<void> =>
    authenticate(ctx, async () => {
      requireFullKey(principalOf(ctx));
      await next();
    });

  router.get('/api/v1/agent/keys', auth, async (ctx) => {
    ctx.body = await services.keyRotation.state(principalOf(ctx));
  });
  router.post('/api/v1/agent/keys', auth, async (ctx) => {
    const input = validator.validate<{ action: RotationAction }>('key-rotation-request.json', await readJsonBody(ctx, KEY_BODY_BYTES, deps.body.budget));
    ctx.body = await services.keyRotation.mutate(principalOf(ctx), input.action);
  });

  router.post('/api/v1/agent/access-keys', auth, async (ctx) => {
    const principal = principalOf(ctx);
    const input = validator.validate<AccessKeyRequest>('access-key-request.json', await readJsonBody(ctx, KEY_BODY_BYTES, deps.body.budget));
    ctx.body = await services.accessKeys.create(principal, input);
    ctx.status = 201;
  });
  router.get('/api/v1/agent/access-keys', auth, async (ctx) => {
    ctx.body = await services.accessKeys.list(principalOf(ctx));
  });
  router.delete('/api/v1/agent/access-keys/:id', auth, async (ctx) => {
    const input = validator.validate<{ factorCode?: string }>('access-key-revoke-request.json', await readJsonBody(ctx, KEY_BODY_BYTES, deps.body.budget));
    ctx.body = await services.accessKeys.revoke(principalOf(ctx), ctx.params.id, input.factorCode);
  });

  router.post('/api/v1/agent/2fa', auth, async (ctx) => {
    const input = validator.validate<{ action: TwoFactorAction; factorCode?: string }>(
      'two-factor-request.json',
      await readJsonBody(ctx, KEY_BODY_BYTES, deps.body.budget),
    );
    const principal = principalOf(ctx);
    if (input.action === 'enroll') ctx.body = await services.twoFactor.enroll(principal);
    else if (input.action === 'confirm') ctx.body = await services.twoFactor.confirm(principal, input.factorCode);
    else ctx.body = await services.twoFactor.disable(principal, input.factorCode);
  });
};
