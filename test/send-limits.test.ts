import t from 'tap';
import { runCli } from '../bin/cli.js';
import { ManualClock } from '../src/core/clock.js';
import { startApp, type TestApp } from './helpers/app.js';

const send = (app: TestApp, key: string, to: string | string[], subject = 's') =>
  app.api('POST', '/api/v1/agent/send', { key, body: { to, subject, text: 'x' } });

const recipients = (n: number, from = 0) => Array.from({ length: n }, (_, i) => `r${from + i}@example.com`);

t.test('probation: 3 recipients a minute, 10 a day, reset at midnight in the service time zone', async (t) => {
  // 2026-03-10 22:58 in New York (UTC-4 after the DST change on March 8).
  const clock = new ManualClock('2026-03-11T02:58:00Z');
  const app = await startApp(t, { timeZone: 'America/New_York' }, { clock });
  const agent = await app.register();
  await app.app.services.accounts.addCredits(agent.email, 100);
  const status = await app.api('GET', '/api/v1/agent/sending', { key: agent.apiKey });
  t.same(status.body, {
    state: 'probation',
    limits: { recipientsPerDay: 10, recipientsPerMinute: 3, sendRequestsPerMinute: 100 },
    usage: { recipientsToday: 0 },
    review: { status: 'none', reason: status.body.review.reason },
  });
  t.equal((await send(app, agent.apiKey, recipients(3))).status, 200);
  const fourth = await send(app, agent.apiKey, recipients(1, 3));
  t.equal(fourth.status, 429);
  t.equal(fourth.headers.get('retry-after'), '60');
  t.match(fourth.body.error, /3 recipients a minute/);
  clock.advance(30_000);
  t.equal((await send(app, agent.apiKey, recipients(1, 3))).headers.get('retry-after'), '30', 'sliding minute');
  for (let sent = 3; sent < 9; sent += 3) {
    clock.advance(60_000);
    t.equal((await send(app, agent.apiKey, recipients(3, sent))).status, 200);
  }
  clock.advance(60_000);
  // 9 used today; 2 more would pass 10.
  const overDay = await send(app, agent.apiKey, recipients(2, 9));
  t.equal(overDay.status, 429);
  t.match(overDay.body.error, /daily sending limit of 10/);
  t.equal((await app.api('GET', '/api/v1/agent/sending', { key: agent.apiKey })).body.usage.recipientsToday, 9);
  t.equal((await send(app, agent.apiKey, recipients(1, 9))).status, 200, 'exactly 10');
  const full = await send(app, agent.apiKey, recipients(1, 10));
  t.equal(full.status, 429);
  // Now 23:01:30 local, so midnight is 58.5 minutes away.
  t.equal(full.headers.get('retry-after'), String(58 * 60 + 30));
  t.equal((await app.api('GET', '/api/v1/agent/balance', { key: agent.apiKey })).body.credits, 90, 'refusals charged nothing');
  clock.set('2026-03-11T03:59:59Z');
  t.equal((await send(app, agent.apiKey, recipients(1, 10))).status, 429, 'still 23:59:59 in New York');
  clock.set('2026-03-11T04:00:00Z');
  t.equal((await send(app, agent.apiKey, recipients(1, 10))).status, 200, 'a new day at local midnight');
  t.equal((await app.api('GET', '/api/v1/agent/sending', { key: agent.apiKey })).body.usage.recipientsToday, 1);
});

t.test('the day boundary defaults to UTC midnight', async (t) => {
  const clock = new ManualClock('2026-05-01T23:56:00Z');
  const app = await startApp(t, {}, { clock });
  const agent = await app.register();
  await app.app.services.accounts.addCredits(agent.email, 100);
  // One a minute: 23:56 to 23:59 on May 1st, then 00:00 to 00:05 on May 2nd.
  for (let i = 0; i < 10; i += 1) {
    clock.set(new Date(Date.parse('2026-05-01T23:56:00Z') + i * 60_000));
    t.equal((await send(app, agent.apiKey, `r${i}@example.com`)).status, 200, `send ${i}`);
  }
  // 4 were on May 1st, so May 2nd has used 6 of 10.
  t.equal((await app.api('GET', '/api/v1/agent/sending', { key: agent.apiKey })).body.usage.recipientsToday, 6);
});

t.test('send requests per minute per account, with Retry-After', async (t) => {
  const clock = new ManualClock('2026-01-05T10:00:00Z');
  const app = await startApp(t, { limits: { sendRequestsPerMinute: 3 } }, { clock });
  const agent = await app.register();
  await app.app.services.accounts.addCredits(agent.email, 100);
  await app.app.services.sending.setState(agent.email, 'reviewed');
  for (let i = 0; i < 3; i += 1) {
    t.equal((await send(app, agent.apiKey, `r${i}@example.com`)).status, 200);
    clock.advance(10_000);
  }
  const blocked = await send(app, agent.apiKey, 'r9@example.com');
  t.equal(blocked.status, 429);
  t.equal(blocked.headers.get('retry-after'), '30');
  const other = await app.register();
  await app.app.services.accounts.addCredits(other.email, 1);
  t.equal((await send(app, other.apiKey, 'x@example.com')).status, 200, 'per account');
  clock.advance(30_000);
  t.equal((await send(app, agent.apiKey, 'r9@example.com')).status, 200);
});

t.test('states: standard, reviewed, paused (403); GET /sending and the CLI', async (t) => {
  const app = await startApp(t);
  const agent = await app.register();
  await app.app.services.accounts.addCredits(agent.email, 500);
  const dataDir = app.app.config.dataDir;
  const cli = (...args: string[]) => runCli([...args, '--data-dir', dataDir, '--log-level', 'silent']);
  t.equal(await cli('sending', 'set', agent.email, 'standard'), 0);
  t.match((await app.api('GET', '/api/v1/agent/sending', { key: agent.apiKey })).body, {
    state: 'standard',
    limits: { recipientsPerDay: 100, recipientsPerMinute: 50, sendRequestsPerMinute: 100 },
  });
  t.equal((await send(app, agent.apiKey, recipients(50))).status, 200, '50 at once in standard');
  t.equal((await send(app, agent.apiKey, 'one-more@example.com')).status, 429, '51 in a minute');
  t.equal(await cli('sending', 'set', agent.email, 'reviewed'), 0);
  t.match((await app.api('GET', '/api/v1/agent/sending', { key: agent.apiKey })).body, {
    state: 'reviewed',
    limits: { recipientsPerDay: 1000, recipientsPerMinute: 200 },
    usage: { recipientsToday: 50 },
    review: { status: 'approved' },
  });
  t.equal((await send(app, agent.apiKey, 'one-more@example.com')).status, 200);
  t.equal(await cli('sending', 'set', agent.email, 'paused'), 0);
  const paused = await send(app, agent.apiKey, 'x@example.com');
  t.equal(paused.status, 403);
  t.match(paused.body.error, /paused/);
  t.match((await app.api('GET', '/api/v1/agent/sending', { key: agent.apiKey })).body, {
    state: 'paused',
    limits: { recipientsPerDay: 0, recipientsPerMinute: 0 },
    review: { status: 'suspended', reason: /paused/ },
  });
  t.equal((await app.api('GET', '/api/v1/agent/balance', { key: agent.apiKey })).body.credits, 500 - 51);
  t.equal(await cli('sending', 'set', agent.email, 'vip'), 2, 'unknown state');
  t.equal(await cli('sending', 'set', 'nobody@agents.localhost', 'standard'), 1, 'unknown account');
  t.equal(await cli('sending', 'set', agent.email), 2, 'usage');
});
