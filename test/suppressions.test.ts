import t from 'tap';
import { ManualClock } from '../src/core/clock.js';
import { startApp } from './helpers/app.js';

const HOUR = 60 * 60 * 1000;

t.test('list, release, 403 for a complaint, 404, 10 releases an hour', async (t) => {
  const clock = new ManualClock('2026-04-01T08:00:00Z');
  const app = await startApp(t, {}, { clock });
  const agent = await app.register();
  const other = await app.register();
  const suppressions = app.app.services.suppressions;
  const bounces = [];
  for (let i = 0; i < 12; i++) bounces.push(await suppressions.add(agent.email, `gone${i}@remote.test`, 'bounce'));
  const complaint = await suppressions.add(agent.email, 'angry@remote.test', 'complaint');
  await t.rejects(() => suppressions.add(agent.email, 'Gone0@Remote.test', 'bounce'), { code: 'conflict' });
  await t.rejects(() => suppressions.add(agent.email, 'x@remote.test', 'spam'), { code: 'invalid_input' });

  const list = await app.api('GET', '/api/v1/agent/outbound/suppressions', { key: agent.apiKey });
  t.equal(list.status, 200);
  t.equal(list.body.suppressions.length, 13);
  t.match(
    list.body.suppressions.find((s: any) => s.id === complaint.id),
    { address: 'angry@remote.test', reason: 'complaint', canRelease: false },
  );
  t.same((await app.api('GET', '/api/v1/agent/outbound/suppressions', { key: other.apiKey })).body.suppressions, [], 'per account');
  t.equal((await app.api('GET', '/api/v1/agent/outbound/suppressions')).status, 401);

  const denied = await app.api('DELETE', `/api/v1/agent/outbound/suppressions/${complaint.id}`, { key: agent.apiKey });
  t.equal(denied.status, 403);
  t.equal(denied.body.code, 'forbidden');
  t.equal(
    (await app.api('DELETE', `/api/v1/agent/outbound/suppressions/${bounces[0].id}`, { key: other.apiKey })).status,
    404,
    'another account cannot release it',
  );

  for (let i = 0; i < 10; i += 1) {
    const released = await app.api('DELETE', `/api/v1/agent/outbound/suppressions/${bounces[i].id}`, { key: agent.apiKey });
    t.same(released.body, { success: true, id: bounces[i].id, address: `gone${i}@remote.test`, released: true });
  }
  t.equal((await app.api('DELETE', `/api/v1/agent/outbound/suppressions/${bounces[0].id}`, { key: agent.apiKey })).status, 404, 'already released');
  clock.advance(10 * 60 * 1000);
  const limited = await app.api('DELETE', `/api/v1/agent/outbound/suppressions/${bounces[10].id}`, { key: agent.apiKey });
  t.equal(limited.status, 429);
  t.equal(limited.headers.get('retry-after'), String(50 * 60));
  clock.advance(HOUR - 10 * 60 * 1000);
  t.equal((await app.api('DELETE', `/api/v1/agent/outbound/suppressions/${bounces[10].id}`, { key: agent.apiKey })).status, 200, 'free again after an hour');
  const remaining = (await app.api('GET', '/api/v1/agent/outbound/suppressions', { key: agent.apiKey })).body.suppressions;
  t.same(remaining.map((s: any) => s.address).sort(), ['angry@remote.test', 'gone11@remote.test']);
});

t.test('a released address can be sent to again; a suppressed one is not charged', async (t) => {
  const app = await startApp(t, { outbound: { relay: 'smtp://127.0.0.1:9', timeoutMs: 1000 } });
  const agent = await app.register();
  await app.app.services.accounts.addCredits(agent.email, 2);
  await app.app.services.sending.setState(agent.email, 'standard');
  await app.app.queues.delivery.stop();
  const record = await app.app.services.suppressions.add(agent.email, 'gone@remote.test', 'bounce');
  const first = await app.api('POST', '/api/v1/agent/send', { key: agent.apiKey, body: { to: 'gone@remote.test', subject: 's', text: 't' } });
  t.equal(first.status, 200);
  t.equal((await app.api('GET', '/api/v1/agent/balance', { key: agent.apiKey })).body.credits, 2, 'suppressed: not charged');
  await app.api('DELETE', `/api/v1/agent/outbound/suppressions/${record.id}`, { key: agent.apiKey });
  await app.api('POST', '/api/v1/agent/send', { key: agent.apiKey, body: { to: 'gone@remote.test', subject: 's2', text: 't' } });
  t.equal((await app.api('GET', '/api/v1/agent/balance', { key: agent.apiKey })).body.credits, 1, 'released: charged and queued');
});

t.test('the account pauses itself past 10% bounces or 0.5% complaints over its last 100 recipients', async (t) => {
  const app = await startApp(t, { outbound: { relay: 'smtp://127.0.0.1:9', timeoutMs: 1000 } });
  const sending = async (key: string) => (await app.api('GET', '/api/v1/agent/sending', { key })).body.state;
  const complainer = await app.register();
  await app.app.services.sending.setState(complainer.email, 'standard');
  await app.app.services.accounts.addCredits(complainer.email, 5);
  await app.app.queues.delivery.stop();
  await app.api('POST', '/api/v1/agent/send', { key: complainer.apiKey, body: { to: 'reader@remote.test', subject: 's', text: 't' } });
  t.equal(await sending(complainer.apiKey), 'standard');
  await app.app.services.suppressions.add(complainer.email, 'reader@remote.test', 'complaint');
  t.equal(await sending(complainer.apiKey), 'paused', 'one complaint in 100 recipients passes 0.5%');
  const refused = await app.api('POST', '/api/v1/agent/send', { key: complainer.apiKey, body: { to: 'x@remote.test', subject: 's', text: 't' } });
  t.equal(refused.status, 403);
});
