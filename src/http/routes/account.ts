import type { Router } from '@koa/router';
import type { RegisterInput } from '../../services/accounts/accounts.js';
import { principalOf, requireAuth } from '../auth.js';
import { readJsonBody } from '../body.js';
import { clientIp } from '../client-ip.js';
import type { HttpDeps } from '../context.js';

export const accountRoutes = (router: Router, deps: HttpDeps): void => {
  const { services, validator } = deps;
  router.post('/api/v1/agent/register', async (ctx) => {
    // Counted as it reaches here, before its body is read (`limits.registrationsPerIpPerHour`, docs/agents/rest.md).
    const registration = await services.accounts.registerFrom(clientIp(ctx, deps.trustProxy), async () =>
      validator.validate<RegisterInput>('register-request.json', await readJsonBody(ctx, deps.body.smallBytes, deps.body.budget)),
    );
    ctx.status = 201;
    ctx.body = registration;
  });
  router.get('/api/v1/agent/balance', requireAuth(services.auth), async (ctx) => {
    ctx.body = await services.balance.of(principalOf(ctx));
  });
};
