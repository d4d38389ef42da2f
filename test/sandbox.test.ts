// Sandbox keys: sends validated like any other, charged to nobody, never leaving the host;
// the magic recipients on sandbox.invalid produce their outcomes, and those reach outbound
// tracking, the webhook and the event stream.
import t from 'tap';
import { creditsOf, funded } from './helpers/agents.js';
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

t.test("idempotency records are a sandbox key's own: neither its record nor the account's answers the other's send", async (t) => {
  const sink = await startSink(t);
  const app = await startApp(t, { outbound: { relay: `smtp://127.0.0.1:${sink.port}`, timeoutMs: 5000 } });
  const agent = await funded(app, 5);
  const sandbox = await issueAccessKey(app, agent.apiKey, SANDBOX);
  const message = { to: 'someone@example.com', subject: 'shared key', text: 'the same body' };
  const send = (key: string, idempotencyKey: string) =>
    app.api('POST', '/api/v1/agent/send', { key, body: message, headers: { 'idempotency-key': idempotencyKey } });

  // The sandbox key first, then the full key with the same body and key.
  const fake = await send(sandbox.apiKey, 'shared-idem-1');
  t.equal(fake.status, 200);
  const real = await send(agent.apiKey, 'shared-idem-1');
  t.equal(real.status, 200);
  t.notOk(real.body.replayed, "the full key's send is not answered by the sandbox key's record");
  t.not(real.body.id, fake.body.id);
  await app.app.queues.delivery.runOnce();
  t.equal(sink.messages.length, 1, "the full key's message left the host");
  t.equal(await creditsOf(app, agent.apiKey), 4, 'and was charged');

  // The full key first, then the sandbox key.
  const first = await send(agent.apiKey, 'shared-idem-2');
  t.equal(first.status, 200);
  const sandboxed = await send(sandbox.apiKey, 'shared-idem-2');
  t.equal(sandboxed.status, 200, "the sandbox key's send is its own");
  t.notOk(sandboxed.body.replayed, "not answered by the full key's record");
  t.not(sandboxed.body.id, first.body.id);
  const detail = await app.api('GET', `/api/v1/agent/outbound/${sandboxed.body.id}`, { key: agent.apiKey });
  t.match(detail.body.recipients, [{ status: 'delivered' }], 'a sandbox outcome');
  await app.app.queues.delivery.runOnce();
  t.equal(sink.messages.length, 2, "only the full key's second message left the host");
  t.equal(await creditsOf(app, agent.apiKey), 3);

  // Each key's retry is still answered by its own record.
  t.match((await send(sandbox.apiKey, 'shared-idem-1')).body, { id: fake.body.id, replayed: true });
  t.match((await send(agent.apiKey, 'shared-idem-1')).body, { id: real.body.id, replayed: true });
  t.match((await send(sandbox.apiKey, 'shared-idem-2')).body, { id: sandboxed.body.id, replayed: true });
  t.match((await send(agent.apiKey, 'shared-idem-2')).body, { id: first.body.id, replayed: true });
  await app.app.queues.delivery.runOnce();
  t.equal(sink.messages.length, 2, 'no retry sent anything again');
});
