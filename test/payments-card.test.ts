import t, { type Test } from 'tap';
import { startApp, type TestApp } from './helpers/app.js';
import { creditsOf } from './helpers/agents.js';
import { startStripeStandIn, type StripeStandIn } from './helpers/stripe-api.js';

const WEBHOOK_SECRET = 'whsec_payments_test_secret';
const CALLBACK = '/api/v1/payment/card/callback';

interface Fixture {
  app: TestApp;
  stripe: StripeStandIn;
}

const fixture = async (t: Test, funding = { paused: false }): Promise<Fixture> => {
  const stripe = await startStripeStandIn(WEBHOOK_SECRET);
  t.teardown(() => stripe.close());
  const app = await startApp(t, { funding, payments: { card: { secretKey: 'sk_test_payments', webhookSecret: WEBHOOK_SECRET, apiUrl: stripe.url } } });
  return { app, stripe };
};

let keys = 0;
const buy = (app: TestApp, key: string, body: unknown, idempotencyKey = `buy-${(keys += 1)}`) =>
  app.api('POST', '/api/v1/agent/payment', { key, body, headers: { 'idempotency-key': idempotencyKey } });

const postCallback = (app: TestApp, signed: { body: string; signature: string }) =>
  app.api('POST', CALLBACK, { body: signed.body, headers: { 'stripe-signature': signed.signature } });

t.test('funding paused (the default): every payment endpoint answers 503 feature_paused and says so', async (t) => {
  const { api, register } = await startApp(t);
  const agent = await register();
  const created = await api('POST', '/api/v1/agent/payment', {
    key: agent.apiKey,
    body: { kind: 'mail_credits', method: 'card', amountCents: 100 },
    headers: { 'idempotency-key': 'k' },
  });
  t.equal(created.status, 503);
  t.equal(created.body.code, 'feature_paused');
  t.match(created.body.error, /funding is paused/);
  t.equal((await api('GET', '/api/v1/agent/payments', { key: agent.apiKey })).body.code, 'feature_paused');
  t.equal((await api('GET', `/api/v1/agent/payment/status/pay_${'0'.repeat(32)}`, { key: agent.apiKey })).body.code, 'feature_paused');
});

t.test('a limited key gets 403 on every payment endpoint; no key 401', async (t) => {
  const { app } = await fixture(t);
  const agent = await app.register();
  const issued = await app.api('POST', '/api/v1/agent/access-keys', { key: agent.apiKey, body: { name: 'r', kind: 'mail', permissions: ['mail:read'] } });
  const limited = issued.body.apiKey;
  t.equal((await buy(app, limited, { kind: 'mail_credits', method: 'card', amountCents: 100 })).status, 403);
  t.equal((await app.api('GET', '/api/v1/agent/payments', { key: limited })).status, 403);
  t.equal((await app.api('GET', `/api/v1/agent/payment/status/pay_${'0'.repeat(32)}`, { key: limited })).status, 403);
  t.equal((await app.api('GET', '/api/v1/agent/payments')).status, 401);
});

t.test("request rules: Idempotency-Key required, whole dollars, the kind's own fields", async (t) => {
  const { app, stripe } = await fixture(t);
  const agent = await app.register();
  const missing = await app.api('POST', '/api/v1/agent/payment', { key: agent.apiKey, body: { kind: 'mail_credits', method: 'card', amountCents: 100 } });
  t.equal(missing.status, 400);
  t.match(missing.body.error, /Idempotency-Key/);
  for (const body of [
    { kind: 'mail_credits', method: 'card', amountCents: 150 },
    { kind: 'mail_credits', method: 'card' },
    { kind: 'mail_credits', method: 'card', amountCents: 100, periods: 1 },
    { kind: 'mail_credits', method: 'cash', amountCents: 100 },
    { kind: 'mail_credits', method: 'card', amountCents: 0 },
    { kind: 'mail_credits', method: 'card', amountCents: 100.5 },
  ])
    t.equal((await buy(app, agent.apiKey, body)).status, 400, JSON.stringify(body));
  t.same(await app.app.store.invoices.listForAccount(agent.userId, 10), [], 'no invoice made');
  t.equal(stripe.calls.create, 0, 'no checkout opened');
});

t.test('card: a checkout, the same invoice for the same key and body, 409 for another body', async (t) => {
  const { app, stripe } = await fixture(t);
  const agent = await app.register();
  const body = { kind: 'mail_credits', method: 'card', amountCents: 500 };
  const first = await buy(app, agent.apiKey, body, 'order-1');
  t.equal(first.status, 200);
  t.match(first.body, { kind: 'mail_credits', method: 'card', status: 'pending', amountCents: 500, credits: 50_000 });
  t.match(first.body.token, /^pay_[0-9a-f]{32}$/);
  const session = [...stripe.sessions.values()][0];
  t.equal(first.body.checkoutUrl, session.url);
  t.match(session, { client_reference_id: first.body.token, amount_total: 500, currency: 'usd', mode: 'payment' });
  const again = await buy(app, agent.apiKey, body, 'order-1');
  t.same(again.body, first.body, 'the same invoice');
  t.equal(stripe.sessions.size, 1, 'one checkout session');
  const other = await buy(app, agent.apiKey, { ...body, amountCents: 600 }, 'order-1');
  t.equal(other.status, 409);
  const listed = await app.api('GET', '/api/v1/agent/payments', { key: agent.apiKey });
  t.same(
    listed.body.payments.map((p: any) => p.token),
    [first.body.token],
  );
  t.same(stripe.unexpected, []);
});

t.test('card callback: success applies once; replay, wrong signature, old timestamp, unknown session change nothing', async (t) => {
  const { app, stripe } = await fixture(t);
  const agent = await app.register();
  const sendingBefore = (await app.api('GET', '/api/v1/agent/sending', { key: agent.apiKey })).body;
  const invoice = (await buy(app, agent.apiKey, { kind: 'mail_credits', method: 'card', amountCents: 300 })).body;
  const session = stripe.pay([...stripe.sessions.keys()][0]);

  const forged = stripe.callback('checkout.session.completed', session, { secret: 'whsec_someone_else' });
  const wrong = await postCallback(app, forged);
  t.equal(wrong.status, 400, 'wrong signature');
  const old = await postCallback(app, stripe.callback('checkout.session.completed', session, { timestamp: Math.floor(Date.now() / 1000) - 400 }));
  t.equal(old.status, 400, 'signed more than 5 minutes ago');
  const tampered = stripe.callback('checkout.session.completed', session);
  t.equal(
    (await postCallback(app, { body: tampered.body.replace('"amount_total":300', '"amount_total":301'), signature: tampered.signature })).status,
    400,
    'body changed after signing',
  );
  t.equal(await creditsOf(app, agent.apiKey), 0, 'nothing applied by refused callbacks');

  const unknown = await postCallback(app, stripe.callback('checkout.session.completed', { ...session, id: 'cs_test_not_ours' }));
  t.same(unknown.body, { received: true, outcome: 'unknown_session' });
  t.equal(await creditsOf(app, agent.apiKey), 0);

  const signed = stripe.callback('checkout.session.completed', session);
  t.same((await postCallback(app, signed)).body, { received: true, outcome: 'applied' });
  t.equal(await creditsOf(app, agent.apiKey), 30_000, '$3 buys 30,000 credits');
  t.same((await postCallback(app, signed)).body, { received: true, outcome: 'replay' }, 'the same event again');
  t.same((await postCallback(app, stripe.callback('checkout.session.completed', session))).body, { received: true, outcome: 'already_applied' });
  t.equal(await creditsOf(app, agent.apiKey), 30_000, 'applied once');

  const status = await app.api('GET', `/api/v1/agent/payment/status/${invoice.token}`, { key: agent.apiKey });
  t.match(status.body, { status: 'applied', credits: 30_000 });
  t.ok(status.body.appliedAt);
  const sendingAfter = (await app.api('GET', '/api/v1/agent/sending', { key: agent.apiKey })).body;
  t.same(sendingAfter.limits, sendingBefore.limits, 'buying credits does not raise sending limits');
  t.equal(sendingAfter.state, sendingBefore.state);
  t.same(stripe.unexpected, []);
});

t.test('card status: a paid checkout whose callback never came is applied by the status call; an expired one is expired', async (t) => {
  const { app, stripe } = await fixture(t);
  const agent = await app.register();
  const paid = (await buy(app, agent.apiKey, { kind: 'mail_credits', method: 'card', amountCents: 100 })).body;
  const open = await app.api('GET', `/api/v1/agent/payment/status/${paid.token}`, { key: agent.apiKey });
  t.equal(open.body.status, 'pending');
  stripe.pay([...stripe.sessions.keys()][0]);
  t.equal((await app.api('GET', `/api/v1/agent/payment/status/${paid.token}`, { key: agent.apiKey })).body.status, 'applied');
  t.equal(await creditsOf(app, agent.apiKey), 10_000);

  const lapsed = (await buy(app, agent.apiKey, { kind: 'mail_credits', method: 'card', amountCents: 100 })).body;
  const lapsedSession = stripe.expire([...stripe.sessions.keys()][1]);
  t.same((await postCallback(app, stripe.callback('checkout.session.expired', lapsedSession))).body, { received: true, outcome: 'expired' });
  t.equal((await app.api('GET', `/api/v1/agent/payment/status/${lapsed.token}`, { key: agent.apiKey })).body.status, 'expired');
  // Paid after it expired (a processor that answered late): never applied.
  stripe.pay(lapsedSession.id);
  t.same((await postCallback(app, stripe.callback('checkout.session.completed', lapsedSession))).body, { received: true, outcome: 'already_applied' });
  t.equal(await creditsOf(app, agent.apiKey), 10_000);

  const stranger = await app.register();
  t.equal((await app.api('GET', `/api/v1/agent/payment/status/${paid.token}`, { key: stranger.apiKey })).status, 404, 'only the account that made it');
});

t.test('card: Stripe down answers 503 and nothing is applied; the retry with the same key opens one checkout', async (t) => {
  const { app, stripe } = await fixture(t);
  const agent = await app.register();
  stripe.failing = true;
  const body = { kind: 'mail_credits', method: 'card', amountCents: 200 };
  const down = await buy(app, agent.apiKey, body, 'retry-me');
  t.equal(down.status, 503);
  t.equal(down.body.code, 'unavailable');
  stripe.failing = false;
  const retried = await buy(app, agent.apiKey, body, 'retry-me');
  t.equal(retried.status, 200);
  t.ok(retried.body.checkoutUrl);
  t.equal(stripe.sessions.size, 1);
  stripe.pay([...stripe.sessions.keys()][0]);
  stripe.failing = true;
  const status = await app.api('GET', `/api/v1/agent/payment/status/${retried.body.token}`, { key: agent.apiKey });
  t.equal(status.status, 503, 'the processor did not answer');
  t.equal(await creditsOf(app, agent.apiKey), 0);
});

t.test('20 racing status calls and 20 callbacks for one paid invoice apply it once', async (t) => {
  const { app, stripe } = await fixture(t);
  const agent = await app.register();
  const invoice = (await buy(app, agent.apiKey, { kind: 'mail_credits', method: 'card', amountCents: 700 })).body;
  const session = stripe.pay([...stripe.sessions.keys()][0]);
  const results = await Promise.all([
    ...Array.from({ length: 20 }, () => app.api('GET', `/api/v1/agent/payment/status/${invoice.token}`, { key: agent.apiKey })),
    ...Array.from({ length: 20 }, () => postCallback(app, stripe.callback('checkout.session.completed', session))),
  ]);
  t.ok(results.every((r) => r.status === 200));
  const outcomes = results.slice(20).map((r) => r.body.outcome);
  t.ok(outcomes.filter((o) => o === 'applied').length <= 1);
  t.equal(await creditsOf(app, agent.apiKey), 70_000, 'applied exactly once');
  t.equal((await app.api('GET', `/api/v1/agent/payment/status/${invoice.token}`, { key: agent.apiKey })).body.status, 'applied');
});

t.test('a method not configured: 503 unavailable; the card callback too', async (t) => {
  const { api, register } = await startApp(t, { funding: { paused: false } });
  const agent = await register();
  for (const method of ['card', 'polygon']) {
    const created = await api('POST', '/api/v1/agent/payment', {
      key: agent.apiKey,
      body: { kind: 'mail_credits', method, amountCents: 100 },
      headers: { 'idempotency-key': method },
    });
    t.equal(created.status, 503);
    t.equal(created.body.code, 'unavailable');
    t.match(created.body.error, /not configured/);
  }
  const callback = await api('POST', CALLBACK, { body: '{}', headers: { 'stripe-signature': 't=1,v1=00' } });
  t.equal(callback.status, 503);
});
