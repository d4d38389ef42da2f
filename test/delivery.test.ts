import t from 'tap';
import { ManualClock } from '../src/core/clock.js';
import { OUTBOUND_RECIPIENT_UPDATED } from '../src/core/events.js';
import type { MxResolver } from '../src/core/outbound.js';
import { startApp, type TestApp } from './helpers/app.js';
import { heardChanges } from './helpers/changes.js';
import { creditsOf, funded } from './helpers/agents.js';
import { verifyDkim } from './helpers/dkim.js';
import { issueAccessKey } from './helpers/keys.js';
import { startSink, type Sink } from './helpers/sink.js';

const MINUTE = 60_000;
const HOUR = 60 * MINUTE;

const send = async (app: TestApp, key: string, to: string[], subject = 'hello') => {
  const response = await app.api('POST', '/api/v1/agent/send', { key, body: { to, subject, text: 'Hi there.' } });
  if (response.status !== 200) throw new Error(`send failed: ${response.status} ${JSON.stringify(response.body)}`);
  return response.body.id as string;
};

const detail = async (app: TestApp, key: string, id: string) => (await app.api('GET', `/api/v1/agent/outbound/${id}`, { key })).body;

const statusOf = async (app: TestApp, key: string, id: string) =>
  Object.fromEntries((await detail(app, key, id)).recipients.map((r: any) => [r.email, r.status]));

/** An app relaying every remote message to a sink; the test drives the worker itself. */
const relayApp = async (t: any, sink: Sink, clock?: ManualClock) =>
  startApp(t, { outbound: { relay: `smtp://127.0.0.1:${sink.port}`, timeoutMs: 5000 } }, { clock });

t.test('250, 550 5.1.1, 554 and a drop after DATA, with exact credit arithmetic', async (t) => {
  const sink = await startSink(t);
  const app = await relayApp(t, sink);
  const events = heardChanges(app.app.store, OUTBOUND_RECIPIENT_UPDATED);
  const agent = await funded(app, 10);
  const first = await send(app, agent.apiKey, ['ok@remote.test', 'unknown@remote.test', 'policy@remote.test']);
  const second = await send(app, agent.apiKey, ['drop@other.test']);
  t.equal(await creditsOf(app, agent.apiKey), 6, 'four credits reserved at acceptance');
  await app.app.queues.delivery.runOnce();
  await app.app.queues.delivery.idle();

  t.same(await statusOf(app, agent.apiKey, first), { 'ok@remote.test': 'delivered', 'unknown@remote.test': 'failed', 'policy@remote.test': 'failed' });
  t.same(await statusOf(app, agent.apiKey, second), { 'drop@other.test': 'unresolved' });
  t.equal(await creditsOf(app, agent.apiKey), 8, 'the two definite failures are refunded; delivered and unresolved keep theirs');
  const recipients = (await detail(app, agent.apiKey, first)).recipients;
  t.match(
    recipients.find((r: any) => r.email === 'unknown@remote.test'),
    { smtpCode: 550, enhancedCode: '5.1.1', creditRefunded: true, attempts: 1 },
  );
  t.match(
    recipients.find((r: any) => r.email === 'ok@remote.test'),
    { smtpCode: 250, creditRefunded: false, diagnostic: /queued as/ },
  );

  const suppressions = (await app.api('GET', '/api/v1/agent/outbound/suppressions', { key: agent.apiKey })).body.suppressions;
  t.match(suppressions, [{ address: 'unknown@remote.test', reason: 'bounce', canRelease: true }], 'only 5.1.1 suppresses, not 5.7.1');

  const delivered = sink.messages.length;
  await app.app.queues.delivery.runOnce(new Date(Date.now() + 72 * HOUR));
  t.equal(sink.messages.length, delivered, 'nothing is resent after delivered, failed or unresolved');

  t.match(
    events.find((e) => e.recipient === 'unknown@remote.test' && e.status === 'failed'),
    {
      accountId: agent.userId,
      submissionId: first,
      smtpCode: 550,
      enhancedCode: '5.1.1',
      diagnostic: /no such user/,
      at: Number,
    },
  );
  t.ok(events.some((e) => e.recipient === 'drop@other.test' && e.status === 'unresolved'));

  // The operator settles the unknown outcome: failed refunds exactly once.
  t.same(await app.app.services.delivery.resolve(second, 'failed'), { resolved: 1, refunded: 1 });
  t.same(await app.app.services.delivery.resolve(second, 'failed'), { resolved: 0, refunded: 0 });
  t.same(await statusOf(app, agent.apiKey, second), { 'drop@other.test': 'failed' });
  t.equal(await creditsOf(app, agent.apiKey), 9);
  await t.rejects(() => app.app.services.delivery.resolve(second, 'bounced'), { code: 'invalid_input' });
});

t.test('451 is retried with backoff until 48 hours from acceptance, then fails and refunds', async (t) => {
  const clock = new ManualClock('2026-03-01T10:00:00Z');
  const sink = await startSink(t);
  const app = await relayApp(t, sink, clock);
  const agent = await funded(app, 5);
  const id = await send(app, agent.apiKey, ['defer@remote.test']);
  const accepted = clock.now().getTime();
  const worker = app.app.queues.delivery;
  await worker.idle();
  await worker.runOnce(clock.now()); // the first attempt, by the kick or by this run
  const waits: number[] = [];
  for (let round = 0; round < 40; round += 1) {
    const recipient = (await detail(app, agent.apiKey, id)).recipients[0];
    if (recipient.status !== 'deferred') break;
    waits.push((Date.parse(recipient.nextAttemptAt) - clock.now().getTime()) / MINUTE);
    t.equal((await worker.runOnce(new Date(Date.parse(recipient.nextAttemptAt) - 1))).claimed, 0, 'not before its time');
    clock.set(recipient.nextAttemptAt);
    t.equal((await worker.runOnce(clock.now())).claimed, 1);
  }
  t.same(waits.slice(0, 8), [1, 5, 15, 30, 60, 120, 240, 240]);
  t.equal(waits.length, 18);
  t.equal(clock.now().getTime() - accepted, 48 * HOUR, 'the last attempt is at the 48-hour mark');
  const recipient = (await detail(app, agent.apiKey, id)).recipients[0];
  t.match(recipient, { status: 'failed', attempts: 19, smtpCode: 451, diagnostic: /retries exhausted after 48 h/, creditRefunded: true });
  t.equal(await creditsOf(app, agent.apiKey), 5);
});

t.test('direct MX: resolver-driven, null MX fails 556 5.1.10, A fallback delivers', async (t) => {
  const sink = await startSink(t);
  const resolver: MxResolver = {
    resolveMx: async (name) => {
      if (name === 'nomail.test') return [{ exchange: '', priority: 0 }];
      if (name === 'mx.test') return [{ exchange: 'mail.mx.test', priority: 10 }];
      throw Object.assign(new Error('no MX'), { code: 'ENODATA' });
    },
    resolve4: async (name) =>
      ['mail.mx.test', 'amx.test'].includes(name) ? ['127.0.0.1'] : Promise.reject(Object.assign(new Error('x'), { code: 'ENODATA' })),
    resolve6: async () => Promise.reject(Object.assign(new Error('x'), { code: 'ENODATA' })),
    // No MTA-STS policy anywhere (test/mta-sts.test.ts has them).
    resolveTxt: async () => Promise.reject(Object.assign(new Error('x'), { code: 'ENODATA' })),
  };
  const app = await startApp(t, { outbound: { port: sink.port, timeoutMs: 5000, allowLoopbackMx: true } }, { resolver });
  const agent = await funded(app, 3);
  const id = await send(app, agent.apiKey, ['ok@mx.test', 'ok@amx.test', 'ok@nomail.test']);
  await app.app.queues.delivery.runOnce();
  await app.app.queues.delivery.idle();
  t.same(await statusOf(app, agent.apiKey, id), { 'ok@mx.test': 'delivered', 'ok@amx.test': 'delivered', 'ok@nomail.test': 'failed' });
  t.match((await detail(app, agent.apiKey, id)).recipients[2], { smtpCode: 556, enhancedCode: '5.1.10' });
  t.equal(await creditsOf(app, agent.apiKey), 1);
  t.equal(sink.messages.length, 2, 'one transaction per domain');
  t.match(sink.messages[0].from, /^bounces\+\d+-[0-9a-f]{16}@agents\.localhost$/);
});

t.test('direct MX never connects inside: an MX or A answer of loopback, private or metadata fails 5.4.4', async (t) => {
  const sink = await startSink(t);
  const inside: Record<string, string> = { 'lo.test': '127.0.0.1', 'private.test': '10.0.0.1', 'metadata.test': '169.254.169.254' };
  const resolver: MxResolver = {
    resolveMx: async (name) =>
      name === 'lo.test' ? [{ exchange: 'mx.lo.test', priority: 1 }] : Promise.reject(Object.assign(new Error('no MX'), { code: 'ENODATA' })),
    resolve4: async (name) =>
      name === 'mx.lo.test' ? ['127.0.0.1'] : inside[name] ? [inside[name]] : Promise.reject(Object.assign(new Error('x'), { code: 'ENODATA' })),
    resolve6: async (name) => (name === 'mx.lo.test' ? ['::1'] : Promise.reject(Object.assign(new Error('x'), { code: 'ENODATA' }))),
    resolveTxt: async () => Promise.reject(Object.assign(new Error('x'), { code: 'ENODATA' })),
  };
  const app = await startApp(t, { outbound: { port: sink.port, timeoutMs: 5000 } }, { resolver });
  const agent = await funded(app, 3);
  const id = await send(app, agent.apiKey, ['a@lo.test', 'b@private.test', 'c@metadata.test']);
  await app.app.queues.delivery.runOnce();
  t.same(await statusOf(app, agent.apiKey, id), { 'a@lo.test': 'failed', 'b@private.test': 'failed', 'c@metadata.test': 'failed' });
  for (const recipient of (await detail(app, agent.apiKey, id)).recipients) t.match(recipient, { smtpCode: 550, enhancedCode: '5.4.4', creditRefunded: true });
  t.equal(sink.messages.length, 0, 'nothing reached the loopback sink');
  t.equal(await creditsOf(app, agent.apiKey), 3);
});

t.test('the immediate kick after a send delivers without waiting for cron', async (t) => {
  const sink = await startSink(t);
  const app = await startApp(t, { outbound: { relay: `smtp://127.0.0.1:${sink.port}`, timeoutMs: 5000 } }, { autoDeliver: true });
  const agent = await funded(app, 1);
  await send(app, agent.apiKey, ['ok@remote.test']);
  await sink.waitFor(1);
  t.equal(sink.messages[0].to[0], 'ok@remote.test');
});

t.test('DKIM: remote mail is signed with the generated key and verifies against the printed record', async (t) => {
  const sink = await startSink(t);
  const app = await relayApp(t, sink);
  const record = await app.app.services.dkim.generate('agents.localhost');
  t.match(record.zoneLine, /^agentpost\._domainkey\.agents\.localhost IN TXT "v=DKIM1; k=rsa; p=[A-Za-z0-9+/]+" "[A-Za-z0-9+/=]+"$/);
  const agent = await funded(app, 1);
  await send(app, agent.apiKey, ['ok@remote.test'], 'signed');
  await app.app.queues.delivery.runOnce();
  await sink.waitFor(1);
  const raw = sink.messages[0].raw.toString();
  t.match(raw, /^DKIM-Signature: v=1; a=rsa-sha256; c=relaxed\/relaxed; d=agents\.localhost;\s+q=dns\/txt;\s+s=agentpost;/);
  const pem = `-----BEGIN PUBLIC KEY-----\n${/p=([^;]+)$/
    .exec(record.recordValue)![1]
    .match(/.{1,64}/g)!
    .join('\n')}\n-----END PUBLIC KEY-----\n`;
  t.ok(verifyDkim(raw, pem), 'verifies with the public key from the TXT record');
  t.notOk(verifyDkim(raw.replace('Hi there.', 'Hi there!'), pem), 'a changed body does not');
});

t.test('more than 10 failures over the last 100 recipients pause the account', async (t) => {
  const sink = await startSink(t);
  const app = await relayApp(t, sink);
  const agent = await funded(app, 20);
  await send(
    app,
    agent.apiKey,
    Array.from({ length: 10 }, (_, i) => `unknown${i}@remote.test`),
  );
  await app.app.queues.delivery.runOnce();
  await app.app.queues.delivery.idle();
  const state = async () => (await app.api('GET', '/api/v1/agent/sending', { key: agent.apiKey })).body.state;
  t.equal(await state(), 'standard', '10 of 100 is not past 10%');
  await send(app, agent.apiKey, ['unknown10@remote.test', 'ok@remote.test']);
  await app.app.queues.delivery.runOnce();
  await app.app.queues.delivery.idle();
  t.equal(await state(), 'paused', '11 of 100 is');
  t.equal(await creditsOf(app, agent.apiKey), 20 - 1, 'every failure refunded');
  const refused = await app.api('POST', '/api/v1/agent/send', { key: agent.apiKey, body: { to: 'x@remote.test', subject: 's', text: 't' } });
  t.equal(refused.status, 403);
});

t.test('a definite failure releases the access key budget unit with the credit; an unknown outcome keeps both', async (t) => {
  const sink = await startSink(t);
  const app = await relayApp(t, sink);
  const owner = await funded(app, 10);
  const limited = await issueAccessKey(app, owner.apiKey, {
    name: 'sender',
    kind: 'mail',
    permissions: ['mail:send'],
    dailyRecipientLimit: 5,
    totalRecipientLimit: 5,
  });
  await send(app, limited.apiKey, ['ok@remote.test', 'unknown@remote.test']);
  await send(app, limited.apiKey, ['drop@remote.test']);
  const policy = async () => (await app.api('GET', '/api/v1/agent/balance', { key: limited.apiKey })).body;
  t.match(await policy(), { credits: 7, accessKey: { dailyRecipientsUsed: 3, totalRecipientsUsed: 3 } });
  await app.app.queues.delivery.runOnce();
  t.match(await policy(), { credits: 8, accessKey: { dailyRecipientsUsed: 2, totalRecipientsUsed: 2 } }, 'delivered and unresolved hold theirs');
});
