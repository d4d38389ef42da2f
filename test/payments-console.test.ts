import t from 'tap';
import { dollars } from '../src/console/pages/billing-text.js';
import { startApp, type TestApp } from './helpers/app.js';
import { signedInConsole } from './helpers/console.js';
import { makeOwner, type TestOwner } from './helpers/owners.js';
import { startStripeStandIn } from './helpers/stripe-api.js';

const WEBHOOK_SECRET = 'whsec_console_test_secret';

const signedIn = (app: TestApp, owner: TestOwner) => signedInConsole(app.baseUrl, owner);

t.test('dollars moves the point in the digits', async (t) => {
  t.same([0, 5, 100, 1234, 100000].map(dollars), ['$0.00', '$0.05', '$1.00', '$12.34', '$1000.00']);
});

t.test("the owner console shows its agents' invoices and hosting expiry, and nothing of another owner's", async (t) => {
  const stripe = await startStripeStandIn(WEBHOOK_SECRET);
  t.teardown(() => stripe.close());
  const app = await startApp(t, {
    funding: { paused: false },
    payments: { card: { secretKey: 'sk_test_console', webhookSecret: WEBHOOK_SECRET, apiUrl: stripe.url } },
  });
  const ada = await makeOwner(app, 'ada@example.com');
  const agent = await app.register('adas-agent');
  t.equal((await app.api('POST', '/api/user/agents/claim', { key: ada.token, body: { apiKey: agent.apiKey } })).status, 200);
  const buy = (body: unknown, idempotencyKey: string) =>
    app.api('POST', '/api/v1/agent/payment', { key: agent.apiKey, body, headers: { 'idempotency-key': idempotencyKey } });
  const credits = (await buy({ kind: 'mail_credits', method: 'card', amountCents: 300 }, 'c1')).body;
  const hosting = (await buy({ kind: 'domain_hosting', method: 'card', periods: 2 }, 'h1')).body;
  const session = [...stripe.sessions.values()].find((s) => s.client_reference_id === hosting.token);
  if (!session) throw new Error('no checkout');
  stripe.pay(session.id);
  const signed = stripe.callback('checkout.session.completed', session);
  await app.api('POST', '/api/v1/payment/card/callback', { body: signed.body, headers: { 'stripe-signature': signed.signature } });

  const client = await signedIn(app, ada);
  const page = await client.get('/billing');
  t.equal(page.status, 200);
  t.match(page.text, /<a href="\/billing" aria-current="page">Billing<\/a>/);
  t.match(page.text, new RegExp(credits.token));
  t.match(page.text, new RegExp(hosting.token));
  t.match(page.text, /30000 mail credits/);
  t.match(page.text, /hosting, 2 × 30 days/);
  t.match(page.text, /\$3\.00/);
  t.match(page.text, /\$2\.00/);
  t.match(page.text, /<span class="badge good">applied<\/span>/);
  t.match(page.text, /<span class="badge info">pending<\/span>/);
  const expiry = (await app.app.services.hosting.hostingOf(agent.userId)).expiresAt as string;
  t.match(
    page.text,
    new RegExp(`adas-agent<br><span class="muted">[^<]+</span></td>\\s*<td><span class="badge good">active</span></td><td><time datetime="${expiry}">`),
    "the agent's hosting and when it ends",
  );
  t.match(page.text, /You<br>[\s\S]*?<span class="badge muted">none<\/span>/, "the owner's own account has none");

  const eve = await makeOwner(app, 'eve@example.com');
  const other = await (await signedIn(app, eve)).get('/billing');
  t.equal(other.status, 200);
  t.notMatch(other.text, new RegExp(`${credits.token}|${hosting.token}|adas-agent`));
  t.match(other.text, /No invoices yet/);
});
