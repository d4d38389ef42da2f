import type { Router } from '@koa/router';
import type { Context } from 'koa';
import { AppError } from '../../core/errors.js';
import { validateInput } from '../../core/validate.js';
import { agentPayer, ownerPayer, type Payer } from '../../services/payments/payer.js';
import type { PaymentRequest } from '../../services/payments/payments.js';
import { principalOf, requireAuth } from '../auth.js';
import { readJsonBody, readRawBody } from '../body.js';
import type { HttpDeps } from '../context.js';
import { ownerOf, requireOwner } from '../owner-auth.js';

/** A Stripe event about a Checkout Session is a few KB; more is not a callback of ours. */
const CALLBACK_MAX_BYTES = 256 * 1024;

/**
 * POST payment and GET payment/status/{token} for an agent (docs/agents/payments.md; full key, a
 * limited key is 403), the same for a signed-in owner paying for itself under /api/user, each
 * with the payer's invoices; the service answers 503 while funding is paused. And the card
 * processor's signed callback (no key: the signature is the authentication).
 */
export const paymentRoutes = (router: Router, deps: HttpDeps): void => {
  const { services } = deps;
  const mount = (prefix: string, guard: (ctx: Context, next: () => Promise<void>) => Promise<void>, payerOf: (ctx: Context) => Payer) => {
    router.post(`${prefix}/payment`, guard, async (ctx) => {
      const payer = payerOf(ctx);
      const input = validateInput<PaymentRequest>('payment-request.json', await readJsonBody(ctx, deps.body.smallBytes, deps.body.budget));
      ctx.body = await services.payments.create(payer, ctx.headers['idempotency-key'] === undefined ? undefined : ctx.get('idempotency-key'), input);
    });
    router.get(`${prefix}/payment/status/:token`, guard, async (ctx) => {
      ctx.body = await services.payments.status(payerOf(ctx), ctx.params.token);
    });
    router.get(`${prefix}/payments`, guard, async (ctx) => {
      ctx.body = await services.payments.list(payerOf(ctx));
    });
  };
  mount('/api/v1/agent', requireAuth(services.auth), (ctx) => agentPayer(principalOf(ctx)));
  mount('/api/user', requireOwner(services.ownerSessions), (ctx) => ownerPayer(ownerOf(ctx)));
  router.post('/api/v1/payment/card/callback', async (ctx) => {
    const signature = ctx.get('stripe-signature');
    if (signature === '') throw new AppError('invalid_input', 'the Stripe-Signature header is required', { field: 'Stripe-Signature' });
    const raw = await readRawBody(ctx, CALLBACK_MAX_BYTES, deps.body.budget);
    ctx.body = { received: true, outcome: await services.payments.cardCallback(raw, signature) };
  });
};
