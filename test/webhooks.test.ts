import t from 'tap';
import { startApp } from './helpers/app.js';
import { webhookFixture } from './helpers/webhooks.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

t.test('create answers 201 with a whsec_ secret once; list shows the endpoint without it; a second create is 409', async (t) => {
  const f = await webhookFixture(t, { verified: false });
  const key = f.agent.apiKey;
  const created = await f.api('POST', '/api/v1/agent/webhooks', { key, body: { url: f.receiver.url } });
  t.equal(created.status, 201);
  t.match(created.body, { id: UUID, url: f.receiver.url, events: ['message.received'], status: 'registered' });
  t.match(created.body.signingSecret, /^whsec_[A-Za-z0-9+/]{43}=$/);
  t.equal(Buffer.from(created.body.signingSecret.slice(6), 'base64').length, 32);
  const listed = await f.api('GET', '/api/v1/agent/webhooks', { key });
  t.equal(listed.status, 200);
  t.same(
    listed.body.webhooks.map((w: any) => w.id),
    [created.body.id],
  );
  t.notOk(JSON.stringify(listed.body).includes('whsec_'), 'no secret in the listing');
  const second = await f.api('POST', '/api/v1/agent/webhooks', { key, body: { url: f.receiver.url } });
  t.equal(second.status, 409);
  t.equal(second.body.code, 'conflict');
});

t.test('create input is validated', async (t) => {
  const f = await webhookFixture(t, { verified: false });
  const key = f.agent.apiKey;
  const cases: unknown[] = [
    {},
    { url: 5 },
    { url: f.receiver.url, events: [] },
    { url: f.receiver.url, events: ['message.sent'] },
    { url: f.receiver.url, extra: 1 },
  ];
  for (const body of cases) {
    const response = await f.api('POST', '/api/v1/agent/webhooks', { key, body });
    t.equal(response.status, 400, JSON.stringify(body));
  }
  const optIn = await f.api('POST', '/api/v1/agent/webhooks', { key, body: { url: f.receiver.url, events: ['message.received', 'message.delivery_updated'] } });
  t.equal(optIn.status, 201);
  t.same(optIn.body.events, ['message.received', 'message.delivery_updated']);
});

t.test('webhooks need a key, and a full one: a limited key gets 403', async (t) => {
  const { api, register } = await startApp(t, { webhooks: { allowInsecure: true } });
  const agent = await register();
  t.equal((await api('GET', '/api/v1/agent/webhooks')).status, 401);
  const issued = await api('POST', '/api/v1/agent/access-keys', { key: agent.apiKey, body: { name: 'reader', kind: 'mail', permissions: ['mail:read'] } });
  t.equal(issued.status, 201);
  const limited = issued.body.apiKey;
  const calls: [string, string, unknown?][] = [
    ['GET', '/api/v1/agent/webhooks'],
    ['POST', '/api/v1/agent/webhooks', { url: 'http://127.0.0.1:9/' }],
    ['GET', '/api/v1/agent/webhooks/deliveries'],
    ['GET', '/api/v1/agent/webhooks/deliveries/00000000-0000-4000-8000-000000000000'],
    ['POST', '/api/v1/agent/webhooks/deliveries/00000000-0000-4000-8000-000000000000'],
    ['POST', '/api/v1/agent/webhooks/00000000-0000-4000-8000-000000000000/verify'],
    ['DELETE', '/api/v1/agent/webhooks/00000000-0000-4000-8000-000000000000'],
  ];
  for (const [method, path, body] of calls) {
    const response = await api(method, path, { key: limited, body });
    t.equal(response.status, 403, `${method} ${path}`);
  }
});

t.test('verification: signed, and only HTTP 200 with the same challenge verifies', async (t) => {
  const f = await webhookFixture(t, { verified: false });
  const key = f.agent.apiKey;
  const created = await f.api('POST', '/api/v1/agent/webhooks', { key, body: { url: f.receiver.url } });
  f.receiver.secret = created.body.signingSecret;
  const verifyPath = `/api/v1/agent/webhooks/${created.body.id}/verify`;

  f.receiver.reply = () => ({ status: 200, body: JSON.stringify({ challenge: 'not-the-one' }) });
  const wrong = await f.api('POST', verifyPath, { key });
  t.same(wrong.body, { verified: false, status: 'registered', httpStatus: 200, error: 'challenge_mismatch' });

  f.receiver.reply = (event) => ({ status: 201, body: JSON.stringify({ challenge: event.data.challenge }) });
  const not200 = await f.api('POST', verifyPath, { key });
  t.same(not200.body, { verified: false, status: 'registered', httpStatus: 201, error: 'http_201' });

  f.receiver.reply = (event) => ({ status: 200, body: JSON.stringify({ challenge: event.data.challenge }) });
  const ok = await f.api('POST', verifyPath, { key });
  t.same(ok.body, { verified: true, status: 'verified', httpStatus: 200 });

  const sent = f.receiver.ofType('webhook.verification');
  t.equal(sent.length, 3);
  for (const item of sent) {
    t.ok(item.signatureValid, 'signature checks out with node:crypto and the secret');
    t.equal(item.id, item.event.id);
    t.match(item.event, { id: UUID, type: 'webhook.verification', createdAt: '2026-03-01T12:00:00.000Z' });
    t.match(item.event.data.challenge, /^[A-Za-z0-9_-]{32}$/);
    t.equal(item.timestamp, String(Date.parse('2026-03-01T12:00:00Z') / 1000), 'Unix seconds');
    t.match(item.signature, /^v1,[A-Za-z0-9+/]{43}= v1,[A-Za-z0-9+/]{43}=$/, 'the contract signature and the Standard Webhooks one');
  }
  t.not(sent[0].event.data.challenge, sent[2].event.data.challenge, 'a fresh challenge each time');
  t.equal((await f.api('GET', '/api/v1/agent/webhooks', { key })).body.webhooks[0].status, 'verified');
});

t.test('a new INBOX message reaches the receiver through the kick after commit, signed, reference only', async (t) => {
  const f = await webhookFixture(t);
  await f.mail('hello');
  // No runOnce and no clock move: the commit's kick sends it.
  const [received] = await f.receiver.waitFor('message.received');
  t.ok(received.signatureValid);
  t.same(Object.keys(received.event).sort(), ['createdAt', 'data', 'id', 'type']);
  const inbox = await f.api('GET', '/api/v1/agent/inbox', { key: f.agent.apiKey });
  t.same(received.event.data, { folder: 'INBOX', uidValidity: inbox.body.uidValidity, uid: '1', junk: false });
  t.notOk(received.body.includes('hello'), 'no subject or body in the event');
  await f.runOnce();
  const deliveries = await f.api('GET', '/api/v1/agent/webhooks/deliveries', { key: f.agent.apiKey });
  t.match(deliveries.body, {
    deliveries: [{ id: received.event.id, type: 'message.received', status: 'delivered', attempts: 1, replays: 0, lastHttpStatus: 200 }],
    nextCursor: null,
  });
});

t.test('baseline: mail already in INBOX at verification never produces an event', async (t) => {
  const f = await webhookFixture(t, { verified: false });
  const key = f.agent.apiKey;
  await f.mail('before create');
  const created = await f.api('POST', '/api/v1/agent/webhooks', { key, body: { url: f.receiver.url } });
  f.receiver.secret = created.body.signingSecret;
  await f.mail('after create, before verify');
  await f.runOnce();
  t.equal((await f.api('POST', `/api/v1/agent/webhooks/${created.body.id}/verify`, { key })).body.verified, true);
  await f.runOnce();
  t.equal(f.receiver.ofType('message.received').length, 0);
  await f.mail('after verify');
  const [event] = await f.receiver.waitFor('message.received');
  t.equal(event.event.data.uid, '3', 'only the message after the baseline');
  await f.runOnce();
  t.equal(f.receiver.ofType('message.received').length, 1);
});

t.test('only INBOX is observed, whatever stored the message', async (t) => {
  const f = await webhookFixture(t);
  const mailbox = await f.app.services.mailbox.mailboxOfAccount((await f.app.services.auth.authenticate(f.agent.apiKey)).accountId);
  const { parseMessage } = await import('../src/mime/parse.js');
  const raw = Buffer.from('Subject: appended\r\nFrom: a@example.com\r\n\r\nhi\r\n');
  const parsed = await parseMessage(raw);
  await f.app.store.transaction(async () => {
    await f.app.services.mailbox.append(mailbox, 'Sent', raw, parsed);
    await f.app.services.mailbox.append(mailbox, 'INBOX', raw, parsed, { seen: true });
  });
  await f.runOnce();
  const events = f.receiver.ofType('message.received');
  t.equal(events.length, 1);
  t.equal(events[0].event.data.folder, 'INBOX');
});

t.test('delete erases the endpoint, cancels queued events and allows a new one', async (t) => {
  const f = await webhookFixture(t);
  const key = f.agent.apiKey;
  await f.mailFailingFirstAttempt('will fail');
  const [pending] = (await f.api('GET', '/api/v1/agent/webhooks/deliveries', { key })).body.deliveries;
  t.match(pending, { status: 'pending', attempts: 1, lastError: 'http_500', nextAttemptAt: '2026-03-01T12:00:05.000Z' });
  const deleted = await f.api('DELETE', `/api/v1/agent/webhooks/${f.webhookId}`, { key });
  t.same(deleted.body, { id: f.webhookId, status: 'revoked', cancelledEvents: 1 });
  const again = await f.api('DELETE', `/api/v1/agent/webhooks/${f.webhookId}`, { key });
  t.same(again.body, { id: f.webhookId, status: 'revoked', cancelledEvents: 0 });
  f.receiver.reply = () => ({ status: 200 });
  f.clock.advance(60_000);
  await f.runOnce();
  t.equal(f.receiver.ofType('message.received').length, 1, 'no attempt after delete');
  const detail = await f.api('GET', `/api/v1/agent/webhooks/deliveries/${pending.id}`, { key });
  t.match(detail.body, { status: 'cancelled', lastError: 'endpoint_deleted', attempts: 1 });
  t.equal(detail.body.nextAttemptAt, undefined);
  t.same((await f.api('GET', '/api/v1/agent/webhooks', { key })).body, { webhooks: [] });
  const secret = (await f.app.store.webhookEndpoints.byId(f.webhookId))?.signingSecret;
  t.equal(secret, null, 'the signing secret is erased');
  await f.mail('after delete');
  await f.runOnce();
  t.equal(f.receiver.ofType('message.received').length, 1);
  t.equal((await f.api('POST', '/api/v1/agent/webhooks', { key, body: { url: f.receiver.url } })).status, 201);
  const other = await f.register();
  t.equal((await f.api('DELETE', `/api/v1/agent/webhooks/${f.webhookId}`, { key: other.apiKey })).status, 404, "another agent's endpoint is not found");
});
