// Sandbox keys: sends validated like any other, charged to nobody, never leaving the host;
// the magic recipients on sandbox.invalid produce their outcomes, and those reach outbound
// tracking, the webhook and the event stream.
import t from 'tap';
import { startApp } from './helpers/app.js';
import { opened, openStream } from './helpers/event-stream.js';
import { issueAccessKey } from './helpers/keys.js';
import { startSink } from './helpers/sink.js';
import { webhookFixture } from './helpers/webhooks.js';

const SANDBOX = { name: 'sandbox', kind: 'mail', permissions: ['mail:send'], dailyRecipientLimit: 10, totalRecipientLimit: 10, sandbox: true };

t.test('outcomes by magic recipient; no credit, no budget unit, nothing sent or delivered', async (t) => {
  const sink = await startSink(t);
  const app = await startApp(t, { outbound: { relay: `smtp://127.0.0.1:${sink.port}`, timeoutMs: 5000 } });
  const agent = await app.register();
  const local = await app.register();
  const key = await issueAccessKey(app, agent.apiKey, SANDBOX);
  const stream = openStream(t, app.baseUrl, agent.apiKey, { query: 'events=message.delivery_updated' });
  await opened(stream);
  const to = ['bounce@sandbox.invalid', 'defer+case2@sandbox.invalid', 'complaint@sandbox.invalid', 'someone@example.com', local.email];
  const sent = await app.api('POST', '/api/v1/agent/send', { key: key.apiKey, body: { to, subject: 'sandbox', text: 'hello' } });
  t.equal(sent.status, 200, 'accepted with 0 credits');
  const detail = await app.api('GET', `/api/v1/agent/outbound/${sent.body.id}`, { key: agent.apiKey });
  const statusOf = (address: string) =>
    detail.body.recipients.find((item: { address?: string; email?: string }) => (item.address ?? item.email) === address)?.status;
  t.same(to.map(statusOf), ['bounced', 'deferred', 'delivered', 'delivered', 'delivered']);
  await app.app.queues.delivery.runOnce();
  t.equal(sink.messages.length, 0, 'nothing left the host');
  t.equal((await app.api('GET', '/api/v1/agent/inbox', { key: local.apiKey })).body.totalMessages, 0, 'not delivered to a local mailbox either');
  t.equal((await app.api('GET', '/api/v1/agent/inbox?folder=Sent', { key: agent.apiKey })).body.totalMessages, 1, 'the Sent copy is kept');
  t.equal((await app.api('GET', '/api/v1/agent/balance', { key: agent.apiKey })).body.credits, 0);
  const keys = await app.api('GET', '/api/v1/agent/access-keys', { key: agent.apiKey });
  t.match(keys.body.accessKeys[0], { sandbox: true, dailyRecipientsUsed: 0, totalRecipientsUsed: 0 });
  // queued for each of the five, then one outcome each, and the complaint after its delivery.
  const events = await stream.waitForCount(11);
  const final = events
    .filter((event) => event.data.data.status !== 'queued')
    .map((event) => {
      const { recipient, status, smtpCode, enhancedCode, feedback } = event.data.data;
      return [recipient, status, smtpCode, enhancedCode ?? null, feedback ?? null];
    });
  t.same(
    final,
    [
      ['bounce@sandbox.invalid', 'bounced', 550, '5.1.1', null],
      ['defer+case2@sandbox.invalid', 'deferred', 451, '4.4.1', null],
      ['complaint@sandbox.invalid', 'delivered', 250, null, null],
      ['complaint@sandbox.invalid', 'delivered', null, null, 'complaint'],
      ['someone@example.com', 'delivered', 250, null, null],
      [local.email, 'delivered', 250, null, null],
    ].map(([recipient, status, code, enhanced, feedback]) => [recipient, status, code ?? undefined, enhanced, feedback]),
  );
});

t.test('the webhook gets the same outcomes; the key is validated like any other', async (t) => {
  const app = await webhookFixture(t, { events: ['message.received', 'message.delivery_updated'] });
  const key = await issueAccessKey(app, app.agent.apiKey, { ...SANDBOX, allowedRecipients: ['bounce@sandbox.invalid'] });
  const sent = await app.api('POST', '/api/v1/agent/send', { key: key.apiKey, body: { to: 'bounce@sandbox.invalid', subject: 's', text: 'x' } });
  t.equal(sent.status, 200);
  const received = await app.receiver.waitFor('message.delivery_updated', 2);
  t.same(
    received.map((item) => item.event.data.status),
    ['queued', 'bounced'],
  );
  const refused = await app.api('POST', '/api/v1/agent/send', { key: key.apiKey, body: { to: 'complaint@sandbox.invalid', subject: 's', text: 'x' } });
  t.equal(refused.status, 403, 'allowedRecipients still apply');
  const invalid = await app.api('POST', '/api/v1/agent/send', { key: key.apiKey, body: { to: 'bounce@sandbox.invalid', subject: 's' } });
  t.equal(invalid.status, 400, 'the request is validated');
  const reader = await app.api('POST', '/api/v1/agent/access-keys', {
    key: app.agent.apiKey,
    body: { name: 'r', kind: 'mail', permissions: ['mail:read'], sandbox: true },
  });
  t.equal(reader.status, 400, 'sandbox only with mail:send');
  const real = await issueAccessKey(app, app.agent.apiKey, { ...SANDBOX, sandbox: false });
  t.equal(
    (await app.api('POST', '/api/v1/agent/send', { key: real.apiKey, body: { to: 'bounce@sandbox.invalid', subject: 's', text: 'x' } })).status,
    402,
    'a key that is not a sandbox key pays',
  );
});
