import type { Router } from '@koa/router';
import { AppError } from '../../core/errors.js';
import { validateInput } from '../../core/validate.js';
import type { PaymentRequest } from '../../services/payments/payments.js';
import { principalOf, requireAuth } from '../auth.js';
import { readJsonBody, readRawBody } from '../body.js';
import type { HttpDeps } from '../context.js';

/** A Stripe event about a Checkout Session is a few KB; more is not a callback of ours. */
const CALLBACK_MAX_BYTES = 256 * 1024;

/**
 * Contract Endpoints: POST payment and GET payment/status/{token} (full key; the service
 * refuses limited keys and answers 503 while funding is paused), the account's invoices, and
 * the card processor's signed callback (no key: the signature is the authentication).
 */
export const paymentRoutes = (router: Router, deps: HttpDeps): void => {
  const { services } = deps;
  const auth = requireAuth(services.auth);
  router.post('/api/v1/agent/payment', auth, async (ctx) => {
    const principal = principalOf(ctx);
    const input = validateInput<PaymentRequest>('payment-request.json', await readJsonBody(ctx, deps.body.smallBytes, deps.body.budget));
    ctx.body = await services.payments.create(principal, ctx.headers['idempotency-key'] === undefined ? undefined : ctx.get('idempotency-key'), input);
  });
  router.get('/api/v1/agent/payment/status/:token', auth, async (ctx) => {
    ctx.body = await services.payments.status(principalOf(ctx), ctx.params.token);
  });
  router.get('/api/v1/agent/payments', auth, (ctx) => {
    ctx.body = services.payments.list(principalOf(ctx));
  });
  router.post('/api/v1/payment/card/callback', async (ctx) => {
    const signature = ctx.get('stripe-signature');
    if (signature === '') throw new AppError('invalid_input', 'the Stripe-Signature header is required', { field: 'Stripe-Signature' });
    const raw = await readRawBody(ctx, CALLBACK_MAX_BYTES, deps.body.budget);
    ctx.body = { received: true, outcome: services.payments.cardCallback(raw, signature) };
  });
};
