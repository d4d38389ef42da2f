// GET /api/v1/agent/events with the eventsource client: the webhooks' events and ids, a
// dropped connection resumed with Last-Event-ID missing nothing, opt-in delivery updates,
// heartbeats, the per-account stream limit and who may open a stream.
import t from 'tap';
import { funded } from './helpers/agents.js';
import { startApp } from './helpers/app.js';
import { droppingProxy, opened, openStream } from './helpers/event-stream.js';
import { issueAccessKey } from './helpers/keys.js';
import { deliverDirect, simpleMessage } from './helpers/mail.js';
import { webhookFixture } from './helpers/webhooks.js';

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

t.test('message.received with the id and body the webhook gets', async (t) => {
  const app = await webhookFixture(t);
  const stream = openStream(t, app.baseUrl, app.agent.apiKey);
  await opened(stream);
  await app.mail('first');
  const [event] = await stream.waitForCount(1);
  t.match(event, { type: 'message.received', id: UUID, data: { type: 'message.received', data: { folder: 'INBOX', uid: '1' } } });
  t.equal(event.data.id, event.id, 'the SSE id is the event id');
  const [webhook] = await app.receiver.waitFor('message.received');
  t.equal(webhook.event.id, event.id, 'the same event id as the webhook delivery');
  t.same(webhook.event, event.data, 'the same body');
});

t.test('a dropped connection resumes with Last-Event-ID: nothing missed, nothing twice', async (t) => {
  const app = await startApp(t);
  const agent = await app.register();
  const proxy = await droppingProxy(t, app.app.ports.http);
  const stream = openStream(t, `http://127.0.0.1:${proxy.port}`, agent.apiKey);
  await opened(stream);
  await deliverDirect(app.app, [agent.email], simpleMessage({ to: agent.email, subject: 'one' }));
  await stream.waitForCount(1);
  proxy.drop();
  // Stored while the client cannot reach the server: only a resume can bring them.
  for (const subject of ['two', 'three']) await deliverDirect(app.app, [agent.email], simpleMessage({ to: agent.email, subject }));
  const reconnected = new Promise((resolve) => stream.source.addEventListener('open', resolve, { once: true }));
  proxy.resume();
  await reconnected;
  await deliverDirect(app.app, [agent.email], simpleMessage({ to: agent.email, subject: 'four' }));
  const events = await stream.waitForCount(4);
  t.ok(stream.errors >= 1, 'the client saw the drop');
  t.same(
    events.map((event) => event.data.data.uid),
    ['1', '2', '3', '4'],
    'in order, once each',
  );
  t.equal(new Set(events.map((event) => event.id)).size, 4);

  const late = openStream(t, app.baseUrl, agent.apiKey, { query: `lastEventId=${events[1].id}` });
  t.same(
    (await late.waitForCount(2)).map((event) => event.data.data.uid),
    ['3', '4'],
    'a new client resumes after the id it names',
  );
  const unknown = openStream(t, app.baseUrl, agent.apiKey, { query: 'lastEventId=gone' });
  t.same(
    (await unknown.waitForCount(4)).map((event) => event.data.data.uid),
    ['1', '2', '3', '4'],
    'an id no longer kept: from the oldest kept',
  );
});

t.test('delivery updates only when asked for; heartbeats keep an idle stream alive', async (t) => {
  const app = await startApp(t, { events: { heartbeatSeconds: 1 } });
  const sender = await funded(app, 5);
  const receiver = await app.register();
  const both = openStream(t, app.baseUrl, sender.apiKey, { query: 'events=message.received,message.delivery_updated' });
  const received = openStream(t, app.baseUrl, sender.apiKey);
  await Promise.all([opened(both), opened(received)]);
  const sent = await app.api('POST', '/api/v1/agent/send', { key: sender.apiKey, body: { to: [receiver.email, sender.email], subject: 'hi', text: 'x' } });
  // Each local recipient: queued, then delivered; and the copy to itself in INBOX.
  const events = await both.waitForCount(5);
  const updates = events.filter((event) => event.type === 'message.delivery_updated');
  t.same(
    updates.map((event) => `${event.data.data.recipient} ${event.data.data.status}`).sort(),
    [`${receiver.email} delivered`, `${receiver.email} queued`, `${sender.email} delivered`, `${sender.email} queued`].sort(),
  );
  t.ok(updates.every((event) => event.data.data.submissionId === sent.body.id));
  t.ok(
    events.some((event) => event.type === 'message.received'),
    'the copy to itself arrived in INBOX',
  );
  await received.waitForCount(1);
  t.same(
    received.events.map((event) => event.type),
    ['message.received'],
    'the default stream has no delivery updates',
  );

  const response = await fetch(`${app.baseUrl}/api/v1/agent/events`, { headers: { authorization: `Bearer ${receiver.apiKey}` } });
  t.match(response.headers.get('content-type'), /^text\/event-stream/);
  const reader = response.body!.getReader();
  let text = '';
  while (!text.includes(': heartbeat')) text += new TextDecoder().decode((await reader.read()).value);
  t.match(text, /^retry: \d+\n\n/, 'the reconnection delay first');
  t.pass('a comment line arrives on an idle stream');
  await reader.cancel();
});

/**
 * Opens a stream again after one was closed: the server hears of the close when its socket
 * closes, so an open answered `full` (the cap's status) is tried again for up to 5 s.
 */
const openOnceFreed = async (open: () => Promise<Response>, full: number): Promise<Response> => {
  let response = await open();
  for (let tries = 0; response.status === full && tries < 50; tries += 1) {
    await new Promise((resolve) => setTimeout(resolve, 100));
    response = await open();
  }
  return response;
};

t.test('at most events.maxStreams open on the whole server: one more answers 503 until one closes', async (t) => {
  const app = await startApp(t, { events: { maxStreamsPerAccount: 5, maxStreams: 2 } });
  const [a, b] = [await app.register(), await app.register()];
  const open = (key: string) => fetch(`${app.baseUrl}/api/v1/agent/events`, { headers: { authorization: `Bearer ${key}` } });
  const first = await open(a.apiKey);
  const second = await open(b.apiKey);
  t.same([first.status, second.status], [200, 200], 'one stream per account, two in all');
  const third = await open(b.apiKey);
  t.equal(third.status, 503, 'a third anywhere is one too many');
  t.match(await third.json(), { code: 'unavailable', error: /2 event streams open, the most it holds/ });
  await first.body!.cancel();
  const again = await openOnceFreed(() => open(b.apiKey), 503);
  t.equal(again.status, 200, "a closed stream frees its place, for another account's too");
  await Promise.all([second.body!.cancel(), again.body!.cancel()]);
});

t.test('who may open a stream, and at most events.maxStreamsPerAccount at once', async (t) => {
  const app = await startApp(t, { events: { maxStreamsPerAccount: 2 } });
  const agent = await app.register();
  const open = (key?: string, query = '') => fetch(`${app.baseUrl}/api/v1/agent/events${query}`, { headers: key ? { authorization: `Bearer ${key}` } : {} });
  const first = await open(agent.apiKey);
  const second = await open(agent.apiKey);
  t.same([first.status, second.status], [200, 200]);
  const third = await open(agent.apiKey);
  t.equal(third.status, 429, 'one more than allowed');
  t.match(await third.json(), { code: 'rate_limited' });
  await first.body!.cancel();
  const again = await openOnceFreed(() => open(agent.apiKey), 429);
  t.equal(again.status, 200, 'a closed stream frees its place');
  await Promise.all([second.body!.cancel(), again.body!.cancel()]);
  t.equal((await open()).status, 401);
  const reader = await issueAccessKey(app, agent.apiKey, { name: 'r', kind: 'mail', permissions: ['mail:read'] });
  const read = await open(reader.apiKey);
  t.equal(read.status, 200, 'mail:read may stream');
  await read.body!.cancel();
  const sender = await issueAccessKey(app, agent.apiKey, {
    name: 's',
    kind: 'mail',
    permissions: ['mail:send'],
    dailyRecipientLimit: 1,
    totalRecipientLimit: 1,
  });
  t.equal((await open(sender.apiKey)).status, 403, 'mail:send alone may not');
  t.equal((await open(agent.apiKey, '?events=webhook.verification')).status, 400);
});
