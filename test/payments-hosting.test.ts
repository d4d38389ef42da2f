import t, { type Test } from 'tap';
import { startApp, type TestApp } from './helpers/app.js';
import { domainKey, hostedHolder, publish, startDomainApp } from './helpers/domains.js';
import { startStripeStandIn, type StripeStandIn } from './helpers/stripe-api.js';

/**
 * Hosting bought by card: domain_hosting extends the buyer's own hosting (the holder of its
 * domains), domain_addon one of its domains, 30 days per period, in the transaction that
 * applies the invoice. Polygon hosting is in payments-polygon.test.ts.
 */
const WEBHOOK_SECRET = 'whsec_hosting_test_secret';
const DAY = 24 * 60 * 60 * 1000;

const fixture = async (t: Test): Promise<{ app: TestApp; stripe: StripeStandIn }> => {
  const stripe = await startStripeStandIn(WEBHOOK_SECRET);
  t.teardown(() => stripe.close());
  const app = await startApp(t, {
    funding: { paused: false },
    payments: { card: { secretKey: 'sk_test_hosting', webhookSecret: WEBHOOK_SECRET, apiUrl: stripe.url } },
  });
  return { app, stripe };
};

let orders = 0;
const buy = (app: TestApp, key: string, body: unknown) =>
  app.api('POST', '/api/v1/agent/payment', { key, body, headers: { 'idempotency-key': `hosting-${(orders += 1)}` } });

/** Pays the invoice's checkout and delivers Stripe's signed callback. */
const payByCard = async (app: TestApp, stripe: StripeStandIn, token: string) => {
  const session = [...stripe.sessions.values()].find((candidate) => candidate.client_reference_id === token);
  if (!session) throw new Error(`no checkout for ${token}`);
  stripe.pay(session.id);
  const signed = stripe.callback('checkout.session.completed', session);
  return (await app.api('POST', '/api/v1/payment/card/callback', { body: signed.body, headers: { 'stripe-signature': signed.signature } })).body;
};

t.test("domain_hosting: $1 a period of 30 days, the buyer's hosting active at once, the extension recorded with the invoice", async (t) => {
  const { app, stripe } = await fixture(t);
  const agent = await app.register();
  const key = await domainKey(app, agent.apiKey);
  t.match((await app.api('GET', '/api/user/domains', { key })).body.hosting, { active: false, expiresAt: null });
  const invoice = await buy(app, agent.apiKey, { kind: 'domain_hosting', method: 'card', periods: 2 });
  t.equal(invoice.status, 200);
  t.match(invoice.body, { kind: 'domain_hosting', amountCents: 200, periods: 2, status: 'pending' });
  t.notOk('credits' in invoice.body);
  const before = Date.now();
  t.same(await payByCard(app, stripe, invoice.body.token), { received: true, outcome: 'applied' });
  const hosting = (await app.api('GET', '/api/user/domains', { key })).body.hosting;
  t.equal(hosting.active, true);
  const ends = Date.parse(hosting.expiresAt);
  t.ok(ends >= before + 60 * DAY && ends <= Date.now() + 60 * DAY, '60 days from now');
  t.same(
    (await app.app.store.hosting.events(agent.userId)).map((event) => [event.source, event.days, event.reference]),
    [['payment', 60, invoice.body.token]],
  );
  // Buying again adds to the end, so buying early loses nothing.
  const more = await buy(app, agent.apiKey, { kind: 'domain_hosting', method: 'card', periods: 1, amountCents: 100 });
  await payByCard(app, stripe, more.body.token);
  t.equal(Date.parse((await app.api('GET', '/api/user/domains', { key })).body.hosting.expiresAt), ends + 30 * DAY);
  t.equal((await app.api('GET', '/api/v1/agent/balance', { key: agent.apiKey })).body.credits, 0, 'hosting buys no credits');
});

t.test(
  "domain_addon: for a verified extra domain of the buyer; the plan's own, an unverified one or another's is refused; a deleted one cancels the invoice",
  async (t) => {
    const stripe = await startStripeStandIn(WEBHOOK_SECRET);
    t.teardown(() => stripe.close());
    const { app, dns } = await startDomainApp(t, {
      funding: { paused: false },
      payments: { card: { secretKey: 'sk_test_hosting', webhookSecret: WEBHOOK_SECRET, apiUrl: stripe.url } },
    });
    const { holder: agent, key, domain: first } = await hostedHolder(app, dns, 'first.example');
    const pending = (await app.api('POST', '/api/user/domains', { key, body: { domain: 'team.example' } })).body;
    const refused = await buy(app, agent.apiKey, { kind: 'domain_addon', method: 'card', periods: 1, domainId: pending.id });
    t.equal(refused.status, 409, 'not verified yet');
    t.match(refused.body.error, /team\.example is not verified/);
    const included = await buy(app, agent.apiKey, { kind: 'domain_addon', method: 'card', periods: 1, domainId: first.id });
    t.equal(included.status, 409, 'the plan includes the first domain');
    t.match(included.body.error, /first\.example is included in the plan/);
    publish(dns, pending.records);
    t.equal((await app.api('POST', `/api/user/domains/${pending.id}/verify`, { key })).body.verified, true);
    const listed = (await app.api('GET', '/api/user/domains', { key })).body.domains;
    t.same(
      listed.map((domain: any) => [domain.domain, domain.addon]),
      [
        ['first.example', { required: false, expiresAt: null }],
        ['team.example', { required: true, expiresAt: null }],
      ],
    );
    const domain = pending;
    const invoice = await buy(app, agent.apiKey, { kind: 'domain_addon', method: 'card', periods: 3, domainId: domain.id });
    t.match(invoice.body, { kind: 'domain_addon', amountCents: 300, periods: 3, domainId: domain.id });
    const before = Date.now();
    t.same(await payByCard(app, stripe, invoice.body.token), { received: true, outcome: 'applied' });
    const addonEnds = (await app.app.store.domains.byId(domain.id))?.addonExpiresAt as number;
    t.ok(addonEnds >= before + 90 * DAY && addonEnds <= Date.now() + 90 * DAY, 'the add-on runs 90 days');
    const after = (await app.api('GET', `/api/user/domains/${domain.id}`, { key })).body;
    t.match(after, { canCreateAddresses: true, addon: { required: true, expiresAt: new Date(addonEnds).toISOString() } });

    const stranger = await app.register();
    const foreign = await buy(app, stranger.apiKey, { kind: 'domain_addon', method: 'card', periods: 1, domainId: domain.id });
    t.equal(foreign.status, 404, 'only the holder buys for its domain');

    const doomed = await buy(app, agent.apiKey, { kind: 'domain_addon', method: 'card', periods: 1, domainId: domain.id });
    t.equal((await app.api('DELETE', `/api/user/domains/${domain.id}`, { key })).status, 200);
    t.same(await payByCard(app, stripe, doomed.body.token), { received: true, outcome: 'already_applied' });
    t.equal(
      (await app.api('GET', `/api/v1/agent/payment/status/${doomed.body.token}`, { key: agent.apiKey })).body.status,
      'canceled',
      'nothing to extend: canceled, for a refund',
    );
  },
);

t.test('hosting request rules', async (t) => {
  const { app } = await fixture(t);
  const agent = await app.register();
  for (const body of [
    { kind: 'domain_hosting', method: 'card' },
    { kind: 'domain_hosting', method: 'card', periods: 13 },
    { kind: 'domain_hosting', method: 'card', periods: 0 },
    { kind: 'domain_hosting', method: 'card', periods: 2, amountCents: 100 },
    { kind: 'domain_hosting', method: 'card', periods: 1, domainId: 'x' },
    { kind: 'domain_addon', method: 'card', periods: 1 },
  ])
    t.equal((await buy(app, agent.apiKey, body)).status, 400, JSON.stringify(body));
  t.equal((await buy(app, agent.apiKey, { kind: 'domain_addon', method: 'card', periods: 1, domainId: 'no-such-domain' })).status, 404);
});
