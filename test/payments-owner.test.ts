import t, { type Test } from 'tap';
import { startApp, type TestApp } from './helpers/app.js';
import { signedInConsole } from './helpers/console.js';
import { addVerifiedDomain, publish, startDomainApp } from './helpers/domains.js';
import { makeOwner, type TestOwner } from './helpers/owners.js';
import { startStripeStandIn, type StripeStandIn } from './helpers/stripe-api.js';

/**
 * Owners pay for themselves (POST /api/user/payment, GET /api/user/payment/status/{token}, the
 * console's Billing page) by card, with the agent endpoint's rules: Idempotency-Key, states,
 * applied once by the verified callback or the status call. Polygon: payments-owner-polygon.test.ts.
 */
const WEBHOOK_SECRET = 'whsec_owner_payments_secret';
const CALLBACK = '/api/v1/payment/card/callback';

const cardConfig = (stripe: StripeStandIn) => ({
  funding: { paused: false },
  payments: { card: { secretKey: 'sk_test_owner', webhookSecret: WEBHOOK_SECRET, apiUrl: stripe.url } },
});

const fixture = async (t: Test): Promise<{ app: TestApp; stripe: StripeStandIn; ada: TestOwner }> => {
  const stripe = await startStripeStandIn(WEBHOOK_SECRET);
  t.teardown(() => stripe.close());
  const app = await startApp(t, cardConfig(stripe));
  return { app, stripe, ada: await makeOwner(app, 'ada@example.com') };
};

let orders = 0;
const buy = (app: TestApp, owner: TestOwner, body: unknown, idempotencyKey = `owner-order-${(orders += 1)}`) =>
  app.api('POST', '/api/user/payment', { key: owner.token, body, headers: { 'idempotency-key': idempotencyKey } });
const status = (app: TestApp, owner: TestOwner, token: string) => app.api('GET', `/api/user/payment/status/${token}`, { key: owner.token });
const creditsOf = async (app: TestApp, owner: TestOwner): Promise<number> => (await app.api('GET', '/api/user/me', { key: owner.token })).body.credits;

const sessionOf = (stripe: StripeStandIn, token: string) => {
  const session = [...stripe.sessions.values()].find((candidate) => candidate.client_reference_id === token);
  if (!session) throw new Error(`no checkout for ${token}`);
  return session;
};
const callback = (app: TestApp, signed: { body: string; signature: string }) =>
  app.api('POST', CALLBACK, { body: signed.body, headers: { 'stripe-signature': signed.signature } });

t.test('funding paused (the default): 503 feature_paused with the reason; the console says so and offers no button', async (t) => {
  const app = await startApp(t);
  const ada = await makeOwner(app, 'ada@example.com');
  const created = await buy(app, ada, { kind: 'domain_hosting', method: 'card', periods: 1 });
  t.equal(created.status, 503);
  t.equal(created.body.code, 'feature_paused');
  t.match(created.body.error, /funding is paused on this server/);
  t.equal((await status(app, ada, `pay_${'0'.repeat(32)}`)).body.code, 'feature_paused');
  t.equal((await app.api('GET', '/api/user/payments', { key: ada.token })).body.code, 'feature_paused');
  const page = await (await signedInConsole(app.baseUrl, ada)).get('/billing');
  t.equal(page.status, 200);
  t.match(page.text, /Buying is paused on this server: funding is paused/);
  t.notMatch(page.text, /action="\/billing\/buy"/, 'no form that cannot work');
  t.notMatch(page.text, /Buy hosting|Buy credits/);
});

t.test('the owner endpoints take an owner session only: none is 401, an API key 403', async (t) => {
  const { app } = await fixture(t);
  const agent = await app.register();
  const body = { kind: 'mail_credits', method: 'card', amountCents: 100 };
  t.equal((await app.api('POST', '/api/user/payment', { body, headers: { 'idempotency-key': 'k' } })).status, 401);
  t.equal((await app.api('POST', '/api/user/payment', { key: agent.apiKey, body, headers: { 'idempotency-key': 'k' } })).status, 403);
  t.equal((await app.api('GET', '/api/user/payments', { key: agent.apiKey })).status, 403);
});

t.test("mail_credits by card for the owner's own mailbox: one invoice per key, applied once by the callback", async (t) => {
  const { app, stripe, ada } = await fixture(t);
  const body = { kind: 'mail_credits', method: 'card', amountCents: 300 };
  const missing = await app.api('POST', '/api/user/payment', { key: ada.token, body });
  t.equal(missing.status, 400, 'the Idempotency-Key is required');
  const first = await buy(app, ada, body, 'ada-1');
  t.equal(first.status, 200);
  t.match(first.body, { kind: 'mail_credits', method: 'card', status: 'pending', amountCents: 300, credits: 30_000 });
  t.same((await buy(app, ada, body, 'ada-1')).body, first.body, 'the same key and body: the same invoice');
  t.equal((await buy(app, ada, { ...body, amountCents: 400 }, 'ada-1')).status, 409, 'another body under the key');
  const session = sessionOf(stripe, first.body.token);
  t.equal(first.body.checkoutUrl, session.url);
  t.equal(session.success_url, `${app.baseUrl}/billing/payments/${first.body.token}?checkout=done`, 'the checkout returns to the console');
  t.equal(session.cancel_url, `${app.baseUrl}/billing/payments/${first.body.token}?checkout=canceled`);

  // An agent's keys are its own: the same Idempotency-Key there is another invoice.
  const agent = await app.register();
  const agents = await app.api('POST', '/api/v1/agent/payment', { key: agent.apiKey, body, headers: { 'idempotency-key': 'ada-1' } });
  t.not(agents.body.token, first.body.token);
  t.equal((await status(app, ada, agents.body.token)).status, 404, "an agent's invoice is not the owner's");
  t.equal((await app.api('GET', `/api/v1/agent/payment/status/${first.body.token}`, { key: agent.apiKey })).status, 404);

  stripe.pay(session.id);
  const signed = stripe.callback('checkout.session.completed', session);
  t.same((await callback(app, signed)).body, { received: true, outcome: 'applied' });
  t.same((await callback(app, signed)).body, { received: true, outcome: 'replay' });
  t.same((await callback(app, stripe.callback('checkout.session.completed', session))).body, { received: true, outcome: 'already_applied' });
  t.equal(await creditsOf(app, ada), 30_000, "applied once, to the owner's mailbox");
  t.match((await status(app, ada, first.body.token)).body, { status: 'applied', credits: 30_000 });
  t.same(
    (await app.api('GET', '/api/user/payments', { key: ada.token })).body.payments.map((payment: { token: string }) => payment.token),
    [first.body.token],
  );
  t.same(stripe.unexpected, []);
});

t.test('racing status calls and callbacks for one paid owner invoice apply it once', async (t) => {
  const { app, stripe, ada } = await fixture(t);
  const invoice = (await buy(app, ada, { kind: 'mail_credits', method: 'card', amountCents: 700 })).body;
  const session = stripe.pay(sessionOf(stripe, invoice.token).id);
  const results = await Promise.all([
    ...Array.from({ length: 10 }, () => status(app, ada, invoice.token)),
    ...Array.from({ length: 10 }, () => callback(app, stripe.callback('checkout.session.completed', session))),
  ]);
  t.ok(results.every((result) => result.status === 200));
  t.equal(await creditsOf(app, ada), 70_000, 'applied exactly once');
});

t.test("domain_hosting and domain_addon by card: the owner's hosting and its verified extra domain", async (t) => {
  const stripe = await startStripeStandIn(WEBHOOK_SECRET);
  t.teardown(() => stripe.close());
  const { app, dns } = await startDomainApp(t, cardConfig(stripe));
  const ada = await makeOwner(app, 'ada@example.com');
  const first = await addVerifiedDomain(app, dns, ada.token, 'ada.example');
  const before = (await app.api('GET', '/api/user/domains', { key: ada.token })).body;
  t.match(
    before.canCreateAddressesReason,
    /buy it on the console's Billing page or with POST \/api\/user\/payment \(kind domain_hosting\)/,
    'an owner is pointed at its own endpoint',
  );

  const hosting = (await buy(app, ada, { kind: 'domain_hosting', method: 'card', periods: 2 })).body;
  t.match(hosting, { kind: 'domain_hosting', amountCents: 200, periods: 2 });
  const session = stripe.pay(sessionOf(stripe, hosting.token).id);
  t.same((await callback(app, stripe.callback('checkout.session.completed', session))).body, { received: true, outcome: 'applied' });
  const after = (await app.api('GET', '/api/user/domains', { key: ada.token })).body;
  t.equal(after.hosting.active, true);
  t.equal(after.canCreateAddresses, true);
  t.same(
    (await app.app.store.hosting.events(ada.id)).map((event) => [event.source, event.days, event.reference]),
    [['payment', 60, hosting.token]],
  );

  t.equal((await buy(app, ada, { kind: 'domain_addon', method: 'card', periods: 1, domainId: first.id })).status, 409, 'the plan includes it');
  const extra = (await app.api('POST', '/api/user/domains', { key: ada.token, body: { domain: 'more.example' } })).body;
  t.equal((await buy(app, ada, { kind: 'domain_addon', method: 'card', periods: 1, domainId: extra.id })).status, 409, 'not verified yet');
  publish(dns, extra.records);
  t.equal((await app.api('POST', `/api/user/domains/${extra.id}/verify`, { key: ada.token })).body.verified, true);
  const addon = (await buy(app, ada, { kind: 'domain_addon', method: 'card', periods: 1, domainId: extra.id })).body;
  t.equal((await status(app, ada, addon.token)).body.status, 'pending');
  stripe.pay(sessionOf(stripe, addon.token).id);
  t.equal((await status(app, ada, addon.token)).body.status, 'applied', 'the status call asks the processor and applies it');
  const extraAfter = (await app.api('GET', `/api/user/domains/${extra.id}`, { key: ada.token })).body;
  t.match(extraAfter, { canCreateAddresses: true, addon: { required: true, expiresAt: /^\d{4}-/ } });
});

t.test('the console: buy forms, one invoice per form, its page, and the card checkout coming back with its outcome', async (t) => {
  const { app, stripe, ada } = await fixture(t);
  const client = await signedInConsole(app.baseUrl, ada);
  const billing = await client.get('/billing');
  t.match(billing.text, /<h3>Hosting \(Personal plan\)<\/h3>/);
  t.match(billing.text, /<h3>Mail credits<\/h3>/);
  t.match(billing.text, /None of your domains needs one/, 'no add-on form without a verified extra domain');
  t.match(billing.text, /<option value="card">Card<\/option>/);
  t.notMatch(billing.text, /<option value="polygon">/, 'a method not configured is not offered');
  const idempotencyKey = /name="kind" value="mail_credits"><input type="hidden" name="idempotencyKey" value="([^"]+)"/.exec(billing.text)?.[1] as string;
  t.ok(idempotencyKey);

  const fields = { kind: 'mail_credits', idempotencyKey, dollars: '2', method: 'card' };
  const posted = await client.post('/billing/buy', fields);
  t.equal(posted.status, 303);
  const token = /^\/billing\/payments\/(pay_[0-9a-f]{32})$/.exec(posted.location ?? '')?.[1] as string;
  t.ok(token, 'to the invoice page');
  t.equal((await client.post('/billing/buy', fields)).location, posted.location, 'the same form sent again: the same invoice');
  t.equal(stripe.sessions.size, 1);

  const open = await client.get(`/billing/payments/${token}`);
  t.equal(open.status, 200);
  const session = sessionOf(stripe, token);
  t.match(open.text, new RegExp(`<a class="button" href="${session.url}">Pay \\$2\\.00 by card</a>`));
  t.match(open.text, /20000 mail credits/);
  t.match(open.text, /<span class="badge info">pending<\/span>/);
  t.notMatch(open.text, /http-equiv="refresh"/, 'a card invoice waits for the buyer, not for the page');

  const canceled = await client.get(`/billing/payments/${token}?checkout=canceled`);
  t.match(canceled.text, /You left the checkout without paying: nothing was charged/);
  stripe.pay(session.id);
  const back = await client.get(`/billing/payments/${token}?checkout=done`);
  t.match(back.text, /Paid: 20000 mail credits added to your mailbox\./, 'back from the checkout: checked with the processor and applied');
  t.match(back.text, /<span class="badge good">applied<\/span>/);
  t.notMatch(back.text, /Pay \$2\.00 by card/);
  t.equal(await creditsOf(app, ada), 20_000);

  const listed = await client.get('/billing');
  t.match(listed.text, new RegExp(`<a href="/billing/payments/${token}"><code>${token}</code></a>`), 'the invoice links to its page');

  const bad = await client.post('/billing/buy', { ...fields, idempotencyKey: 'console-other', dollars: 'lots' });
  t.equal(bad.status, 400, 'refused with the reason, on the billing page');
  t.match(bad.text, /<p class="notice bad" role="status">[^<]*amountCents/);

  const eve = await makeOwner(app, 'eve@example.com');
  const other = await (await signedInConsole(app.baseUrl, eve)).get(`/billing/payments/${token}`);
  t.equal(other.status, 404, "another owner's invoice does not exist for her");
});
