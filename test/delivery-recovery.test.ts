// What a crash leaves behind in delivery: only a recipient whose message data was sent may
// become unresolved; a claim that never reached DATA goes back to the queue.
import t from 'tap';
import { startApp, type TestApp } from './helpers/app.js';
import { creditsOf, funded } from './helpers/agents.js';
import { startSink, type Sink } from './helpers/sink.js';

const send = async (app: TestApp, key: string, to: string[]) => {
  const response = await app.api('POST', '/api/v1/agent/send', { key, body: { to, subject: 'hello', text: 'Hi there.' } });
  if (response.status !== 200) throw new Error(`send failed: ${response.status} ${JSON.stringify(response.body)}`);
  return response.body.id as string;
};

const statusOf = async (app: TestApp, key: string, id: string) =>
  Object.fromEntries((await app.api('GET', `/api/v1/agent/outbound/${id}`, { key })).body.recipients.map((r: any) => [r.email, r.status]));

const relayApp = (t: any, sink: Sink, outbound: Record<string, unknown> = {}) =>
  startApp(t, { outbound: { relay: `smtp://127.0.0.1:${sink.port}`, timeoutMs: 5000, ...outbound } });

const claims = (app: TestApp) => app.app.store.delivery.claimedBefore(Number.MAX_SAFE_INTEGER);

t.test('after a crash a claim past DATA becomes unresolved; one before DATA is sent again, once', async (t) => {
  const sink = await startSink(t);
  const app = await relayApp(t, sink);
  const agent = await funded(app, 3);
  await app.app.queues.delivery.stop();
  const before = await send(app, agent.apiKey, ['never@remote.test']);
  const during = await send(app, agent.apiKey, ['maybe@remote.test']);
  const queuedOnly = await send(app, agent.apiKey, ['later@remote.test']);
  const now = Date.now();
  // What a process killed mid-run leaves: two claims, one of them past DATA.
  const [neverId, maybeId] = await app.app.store.transaction(async () =>
    app.app.store.delivery.claim(await app.app.store.delivery.dueIds(now, 2), now, 'main', now + 60_000),
  );
  await app.app.store.transaction(() => app.app.store.delivery.markDataSent([maybeId], now, 'main'));
  t.same(await claims(app), [
    { id: neverId, dataSent: false },
    { id: maybeId, dataSent: true },
  ]);

  t.equal(await app.app.services.delivery.recoverClaims(), 1, 'one became unresolved');
  t.same(await claims(app), [], 'no claim is left');
  t.same(await statusOf(app, agent.apiKey, before), { 'never@remote.test': 'queued' }, 'never attempted: back in the queue');
  t.same(await statusOf(app, agent.apiKey, during), { 'maybe@remote.test': 'unresolved' });
  const report = await app.app.services.delivery.runOnce();
  t.match(report, { claimed: 2, delivered: 2 });
  t.same(await statusOf(app, agent.apiKey, before), { 'never@remote.test': 'delivered' });
  t.same(await statusOf(app, agent.apiKey, queuedOnly), { 'later@remote.test': 'delivered' });
  t.same(sink.messages.map((m) => m.to[0]).sort(), ['later@remote.test', 'never@remote.test'], 'the unresolved one is never resent');
  t.equal(await creditsOf(app, agent.apiKey), 0, 'every credit stays charged: two delivered, one unknown');
});

t.test("another live node's claims are left alone at start and in runs; once their lease runs out they are taken over", async (t) => {
  const sink = await startSink(t);
  const app = await relayApp(t, sink);
  const agent = await funded(app, 2);
  await app.app.queues.delivery.stop();
  const sent = await send(app, agent.apiKey, ['sent@remote.test']);
  const waiting = await send(app, agent.apiKey, ['waiting@remote.test']);
  const now = Date.now();
  const { delivery } = app.app.store;
  // Node "b" holds both, its lease a minute ahead; it reached DATA for the first.
  const [sentId, waitingId] = await app.app.store.transaction(async () => delivery.claim(await delivery.dueIds(now, 2), now, 'b', now + 60_000));
  await app.app.store.transaction(() => delivery.markDataSent([sentId], now, 'b'));
  // This node ("main") cannot mark or release what b holds.
  await app.app.store.transaction(() => delivery.markDataSent([waitingId], now, 'main'));
  t.equal(await app.app.store.transaction(() => delivery.release(waitingId, 'main')), false);

  t.equal(await app.app.services.delivery.recoverClaims(), 0, 'a start leaves a live node alone');
  t.match(await app.app.services.delivery.runOnce(new Date(now + 30_000)), { claimed: 0 }, 'so does a run');
  t.same(await claims(app), [
    { id: sentId, dataSent: true },
    { id: waitingId, dataSent: false },
  ]);
  t.equal(await app.app.services.delivery.nextDueAt(), now + 60_000, 'the queue is next due when the lease runs out');

  const report = await app.app.services.delivery.runOnce(new Date(now + 60_000));
  t.match(report, { claimed: 1, delivered: 1 }, 'b died: its lease ran out, the claim before DATA is sent again');
  t.same(await statusOf(app, agent.apiKey, sent), { 'sent@remote.test': 'unresolved' }, 'the one past DATA is never resent');
  t.same(await statusOf(app, agent.apiKey, waiting), { 'waiting@remote.test': 'delivered' });
  t.same(
    sink.messages.map((m) => m.to[0]),
    ['waiting@remote.test'],
  );
  t.same(await claims(app), []);
});

t.test('a claim taken over by another node before DATA: this node sends no data and records nothing', async (t) => {
  const sink = await startSink(t);
  const app = await relayApp(t, sink);
  const agent = await funded(app, 1);
  await app.app.queues.delivery.stop();
  const id = await send(app, agent.apiKey, ['taken@remote.test']);
  const { delivery } = app.app.store;
  const claim = delivery.claim.bind(delivery);
  // Right after this node claims, its lease runs out and node "b" takes the recipient (a stall of the event loop).
  delivery.claim = async (ids, now, nodeId, leaseUntil) => {
    const claimed = await claim(ids, now, nodeId, leaseUntil);
    app.app.store.db.prepare("UPDATE submission_recipients SET claimed_by = 'b' WHERE id = ?").run(claimed[0]);
    return claimed;
  };
  const report = await app.app.services.delivery.runOnce();
  t.match(report, { claimed: 1, delivered: 0, deferred: 0 }, 'nothing recorded for a recipient it no longer holds');
  t.equal(sink.messages.length, 0, 'no message data was sent');
  t.same(await statusOf(app, agent.apiKey, id), { 'taken@remote.test': 'queued' });
  t.same(
    (await claims(app)).map((row) => row.dataSent),
    [false],
    "b's claim is as b left it",
  );
});

t.test('a run claims only the batch it is about to send, and marks it before the message data goes out', async (t) => {
  const sink = await startSink(t);
  const app = await relayApp(t, sink, { concurrency: 1, timeoutMs: 1500 });
  const agent = await funded(app, 6);
  await app.app.queues.delivery.stop();
  const hung = await send(app, agent.apiKey, ['hang@remote.test']);
  const ids = [];
  for (let i = 0; i < 4; i += 1) ids.push(await send(app, agent.apiKey, [`ok${i}@remote.test`]));
  const run = app.app.services.delivery.runOnce();
  // The sink takes the message of hang@ and never answers: the first batch is past DATA.
  while (!(await claims(app)).some((claim) => claim.dataSent)) await new Promise((resolve) => setTimeout(resolve, 20));
  t.equal((await claims(app)).length, 1, 'one lane, one batch claimed; the four others are not held');
  t.equal((await claims(app))[0].dataSent, true);
  const report = await run;
  t.match(report, { claimed: 5, batches: 5, delivered: 4, unresolved: 1 });
  t.same(await statusOf(app, agent.apiKey, hung), { 'hang@remote.test': 'unresolved' });
  t.same(await claims(app), []);
});

t.test('a recipient refused at RCPT is not marked; a transaction that never reaches DATA marks nothing', async (t) => {
  const sink = await startSink(t);
  const app = await relayApp(t, sink, { timeoutMs: 1500 });
  const agent = await funded(app, 4);
  await app.app.queues.delivery.stop();
  const marked: number[][] = [];
  const store = app.app.store.delivery;
  const original = store.markDataSent.bind(store);
  store.markDataSent = (ids, now, nodeId) => {
    marked.push([...ids]);
    return original(ids, now, nodeId);
  };
  await send(app, agent.apiKey, ['hang@remote.test', 'unknown@remote.test']);
  await send(app, agent.apiKey, ['defer@remote.test']);
  await app.app.services.delivery.runOnce();
  const rows = app.app.store.submissions;
  t.same(
    await Promise.all(marked.map(async (ids) => await Promise.all(ids.map(async (id) => (await rows.recipientById(id))?.address)))),
    [['hang@remote.test']],
    'only the accepted recipient of the one transaction that reached DATA',
  );
});

t.test('mail queued when the process stopped is delivered right after the next start, not at the next cron tick', async (t) => {
  const sink = await startSink(t);
  const dataDir = t.testdir({});
  const config = { dataDir, outbound: { relay: `smtp://127.0.0.1:${sink.port}`, timeoutMs: 5000 } };
  const before = await startApp(t, config);
  const agent = await funded(before, 1);
  await send(before, agent.apiKey, ['waiting@remote.test']);
  await before.app.stop();
  t.equal(sink.messages.length, 0);
  const after = await startApp(t, config, { autoDeliver: true });
  // The run started by start() itself: nothing else kicks the worker here.
  await after.app.queues.delivery.idle();
  t.same(
    sink.messages.map((message) => message.to[0]),
    ['waiting@remote.test'],
  );
});
