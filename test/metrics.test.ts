// GET /metrics: Prometheus text behind metrics.token; counters fed by what committed, gauges
// read from the status figures at scrape time.
import { spawnSync } from 'node:child_process';
import t from 'tap';
import { funded } from './helpers/agents.js';
import { startApp, type TestApp } from './helpers/app.js';
import { smtpSend } from './helpers/smtp.js';
import { webhookFixture } from './helpers/webhooks.js';

const TOKEN = 'metrics-token-0123456789';

const scrape = async (app: { baseUrl: string }, token?: string) => {
  const response = await fetch(`${app.baseUrl}/metrics`, { headers: token ? { authorization: `Bearer ${token}` } : {} });
  return { status: response.status, type: response.headers.get('content-type'), text: await response.text() };
};

/** The value of one sample line, e.g. `agentpost_queue_depth{queue="delivery"}`; null when absent. */
const sample = (text: string, series: string): number | null => {
  const line = text.split('\n').find((candidate) => candidate.startsWith(`${series} `));
  return line ? Number(line.slice(series.length + 1)) : null;
};

t.test('never public: off without metrics.token, and only for its Bearer token', async (t) => {
  const off = await startApp(t);
  const answer = await off.api('GET', '/metrics');
  t.equal(answer.status, 503);
  t.match(answer.body, { code: 'unavailable', error: /set metrics\.token/ });

  const on = await startApp(t, { metrics: { token: TOKEN } });
  const missing = await on.api('GET', '/metrics');
  t.equal(missing.status, 401);
  t.equal(missing.headers.get('www-authenticate'), 'Bearer');
  t.equal((await scrape(on, `${TOKEN}x`)).status, 401, 'a wrong token');
  const ok = await scrape(on, TOKEN);
  t.equal(ok.status, 200);
  t.match(ok.type, /^text\/plain; version=0\.0\.4/);
  t.match(ok.text, /# TYPE agentpost_process_cpu_seconds_total counter/, 'process figures too');
});

t.test('messages received and sent, recipient outcomes, queue gauges and request latency', async (t) => {
  const app: TestApp = await startApp(t, { metrics: { token: TOKEN } });
  const sender = await funded(app, 5);
  const local = await app.register();
  await smtpSend(app.smtpPort, { from: 'a@example.org', to: [local.email, sender.email], subject: 'in', text: 'x' });
  await app.api('POST', '/api/v1/agent/send', { key: sender.apiKey, body: { to: [local.email, 'far@remote.test'], subject: 'out', text: 'x' } });
  await app.api('GET', '/api/v1/agent/inbox', { key: local.apiKey });
  await app.api('GET', '/api/v1/agent/email/1', { key: local.apiKey });

  const { text } = await scrape(app, TOKEN);
  t.equal(sample(text, 'agentpost_messages_received_total'), 3, 'two SMTP copies and one local delivery');
  t.equal(sample(text, 'agentpost_messages_sent_total'), 1);
  t.equal(sample(text, 'agentpost_delivery_outcomes_total{status="queued"}'), 2);
  t.equal(sample(text, 'agentpost_delivery_outcomes_total{status="delivered"}'), 1, 'the local recipient');
  t.equal(sample(text, 'agentpost_queue_depth{queue="delivery"}'), 1, 'the remote recipient waits');
  t.equal(sample(text, 'agentpost_queue_depth{queue="webhooks"}'), 0);
  t.equal(sample(text, 'agentpost_part_up{part="store"}'), 1);
  t.equal(
    sample(text, 'agentpost_http_request_duration_seconds_count{method="GET",route="/api/v1/agent/email/:id",status="200"}'),
    1,
    'labelled by route template, not by path',
  );
  t.equal(sample(text, 'agentpost_http_request_duration_seconds_count{method="POST",route="/api/v1/agent/send",status="200"}'), 1);
  t.notMatch(text, /^agentpost_certificate_expiry_timestamp_seconds/m, 'no certificate, no expiry sample');
});

t.test('webhook attempts by outcome', async (t) => {
  const fixture = await webhookFixture(t, { config: { metrics: { token: TOKEN } } });
  await fixture.mailFailingFirstAttempt('first');
  fixture.receiver.reply = () => ({ status: 200 });
  fixture.clock.advance(5000);
  await fixture.runOnce();
  const { text } = await scrape(fixture, TOKEN);
  t.equal(sample(text, 'agentpost_webhook_attempts_total{outcome="failure"}'), 1);
  t.equal(sample(text, 'agentpost_webhook_attempts_total{outcome="success"}'), 1);
});

t.test('the inbound queue has its gauges: messages answered in a burst and not yet in their mailboxes', async (t) => {
  const app: TestApp = await startApp(t, { metrics: { token: TOKEN }, smtp: { queue: { inlineLimit: 0, maxMessages: 100 } } }, { manual: ['inbound'] });
  const agent = await app.register();
  await smtpSend(app.smtpPort, { from: 'a@example.org', to: agent.email, subject: 'queued', text: 'x' });
  const queued = (await scrape(app, TOKEN)).text;
  t.equal(sample(queued, 'agentpost_queue_depth{queue="inbound"}'), 1);
  t.equal(sample(queued, 'agentpost_messages_received_total'), 0, 'not received into a mailbox yet');
  await app.app.queues.inbound.runOnce();
  t.equal(sample((await scrape(app, TOKEN)).text, 'agentpost_messages_received_total'), 1, 'counted once delivered');
});

/** Each metric family's name and type, from its `# TYPE` line. */
const families = (text: string): { name: string; type: string }[] => [...text.matchAll(/^# TYPE (\S+) (\S+)$/gm)].map(([, name, type]) => ({ name, type }));

t.test('names follow the Prometheus rules: only counters end in _total; promtool finds no problem', async (t) => {
  const app = await startApp(t, { metrics: { token: TOKEN } });
  const { text } = await scrape(app, TOKEN);
  const found = families(text);
  t.ok(found.length > 20, `${found.length} metric families`);
  // https://prometheus.io/docs/practices/naming/: _total is the counter suffix; _count, _sum and _bucket are a histogram's series.
  t.same(
    found.filter(({ name, type }) => name.endsWith('_total') !== (type === 'counter')),
    [],
    'every counter and nothing else ends in _total',
  );
  t.same(
    found.filter(({ name, type }) => /_(count|sum|bucket)$/.test(name) && type !== 'histogram' && type !== 'summary'),
    [],
    'no other metric takes a histogram suffix',
  );
  for (const kind of ['handles', 'requests', 'resources']) {
    t.equal(found.find((family) => family.name === `agentpost_nodejs_${kind}_active`)?.type, 'gauge', `the active ${kind}, a gauge`);
    t.ok((sample(text, `agentpost_nodejs_${kind}_active`) ?? -1) >= 0, `active ${kind} has a sample`);
  }
  t.ok((sample(text, 'agentpost_nodejs_handles_active') ?? 0) > 0, 'the listeners are active handles');
  const promtool = spawnSync('promtool', ['check', 'metrics'], { input: text, encoding: 'utf8' });
  if (promtool.error) {
    t.comment(`promtool not run: ${promtool.error.message} (apt-get install -y prometheus provides it)`);
    return;
  }
  t.equal(promtool.status, 0, 'promtool check metrics passes');
  t.equal(`${promtool.stdout}${promtool.stderr}`.trim(), '', 'and names no problem');
});
