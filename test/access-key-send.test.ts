import t from 'tap';
import { ManualClock } from '../src/core/clock.js';
import { startApp, type TestApp } from './helpers/app.js';
import { issueAccessKey } from './helpers/keys.js';

/** End to end through POST /send: the send service calls the access-key policy in its accept transaction. */
const ready = async (app: TestApp, credits: number) => {
  const agent = await app.register();
  if (credits > 0) await app.app.services.accounts.addCredits(agent.email, credits);
  await app.app.services.sending.setState(agent.email, 'standard');
  return agent;
};

const balanceOf = async (app: TestApp, key: string) => (await app.api('GET', '/api/v1/agent/balance', { key })).body;

t.test('a limited key sends only within its lists and budgets, alongside the credits', async (t) => {
  const clock = new ManualClock('2026-03-02T15:00:00Z');
  const app = await startApp(t, { timeZone: 'Europe/Berlin' }, { clock });
  const owner = await ready(app, 50);
  const friend = await ready(app, 0);
  const other = await ready(app, 0);
  const missing = 'agent-nobody-zzzzzz@agents.localhost';
  const key = await issueAccessKey(app, owner.apiKey, {
    name: 'notifier',
    kind: 'mail',
    permissions: ['mail:send'],
    allowedSenders: [owner.email],
    allowedRecipients: [friend.email, missing, 'far@example.com'],
    dailyRecipientLimit: 3,
    totalRecipientLimit: 4,
  });
  const send = (body: Record<string, unknown>) => app.api('POST', '/api/v1/agent/send', { key: key.apiKey, body: { subject: 'ping', text: 'hello', ...body } });

  const outside = await send({ to: [friend.email, other.email] });
  t.equal(outside.status, 403, 'a recipient outside allowedRecipients');
  t.match(outside.body.error, other.email);
  t.equal((await send({ to: friend.email, replyTo: 'someone@example.com' })).status, 403, 'replyTo outside allowedSenders');
  t.equal((await balanceOf(app, key.apiKey)).credits, 50, 'nothing charged for refusals');

  const first = await send({ to: friend.email, cc: 'far@example.com' });
  t.equal(first.status, 200);
  t.match((await balanceOf(app, key.apiKey)).accessKey, { dailyRecipientsUsed: 2, totalRecipientsUsed: 2, dailyRecipientLimit: 3, totalRecipientLimit: 4 });
  t.equal((await balanceOf(app, key.apiKey)).credits, 48, 'credits are charged as for a full key');

  const rejected = await send({ to: missing });
  t.equal(rejected.status, 200, 'accepted, then definitely rejected: no such local mailbox');
  t.match((await balanceOf(app, key.apiKey)).accessKey, { dailyRecipientsUsed: 2, totalRecipientsUsed: 2 }, 'the rejection released its unit');
  t.equal((await balanceOf(app, key.apiKey)).credits, 48, 'and its credit');

  const overDaily = await send({ to: [friend.email, 'far@example.com'] });
  t.equal(overDaily.status, 429, '2 + 2 > 3 a day');
  t.ok(Number(overDaily.headers.get('retry-after')) > 0);
  t.equal((await balanceOf(app, key.apiKey)).credits, 48, 'a refused send is not charged');
  t.equal((await send({ to: friend.email, subject: 'third' })).status, 200, '2 + 1 = 3');

  // Local midnight in Berlin (UTC+1 in March) is 23:00 UTC.
  clock.set('2026-03-02T23:00:00Z');
  t.match((await balanceOf(app, key.apiKey)).accessKey, { dailyRecipientsUsed: 0, totalRecipientsUsed: 3 });
  const overTotal = await send({ to: [friend.email, 'far@example.com'], subject: 'fourth' });
  t.equal(overTotal.status, 403, '3 + 2 > 4 in total; totals never reset');
  t.equal((await send({ to: friend.email, subject: 'fifth' })).status, 200);
  t.equal((await send({ to: friend.email, subject: 'sixth' })).status, 403, 'the total budget is spent');
});

t.test('a limited key reads only its own receipts; GET /sending works with it', async (t) => {
  const app = await startApp(t);
  const owner = await ready(app, 20);
  const friend = await ready(app, 0);
  const key = await issueAccessKey(app, owner.apiKey, { name: 's', kind: 'mail', permissions: ['mail:send'], dailyRecipientLimit: 5, totalRecipientLimit: 5 });
  const reader = await issueAccessKey(app, owner.apiKey, { name: 'r', kind: 'mail', permissions: ['mail:read'] });
  const byOwner = await app.api('POST', '/api/v1/agent/send', { key: owner.apiKey, body: { to: friend.email, subject: 'owner', text: 'x' } });
  const byKey = await app.api('POST', '/api/v1/agent/send', { key: key.apiKey, body: { to: friend.email, subject: 'key', text: 'x' } });
  t.equal(byKey.status, 200);
  const list = await app.api('GET', '/api/v1/agent/outbound', { key: key.apiKey });
  t.same(
    list.body.submissions.map((s: any) => s.id),
    [byKey.body.id],
    'only its own submissions',
  );
  t.equal((await app.api('GET', `/api/v1/agent/outbound/${byKey.body.id}`, { key: key.apiKey })).status, 200);
  t.equal((await app.api('GET', `/api/v1/agent/outbound/${byOwner.body.id}`, { key: key.apiKey })).status, 404, "not the owner's");
  t.equal((await app.api('GET', '/api/v1/agent/outbound', { key: owner.apiKey })).body.submissions.length, 2, 'the full key sees all');
  t.equal(
    (await app.api('POST', '/api/v1/agent/send', { key: reader.apiKey, body: { to: friend.email, subject: 'r', text: 'x' } })).status,
    403,
    'mail:read cannot send',
  );
  t.equal((await app.api('GET', '/api/v1/agent/sending', { key: key.apiKey })).status, 200);
  t.equal((await app.api('GET', '/api/v1/agent/sending', { key: reader.apiKey })).status, 200);
  await app.api('DELETE', `/api/v1/agent/access-keys/${key.id}`, { key: owner.apiKey });
  t.equal((await app.api('POST', '/api/v1/agent/send', { key: key.apiKey, body: { to: friend.email, subject: 'k2', text: 'x' } })).status, 401, 'revoked');
});
