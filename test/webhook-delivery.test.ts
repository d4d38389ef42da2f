import t from 'tap';
import { parseMessage } from '../src/mime/parse.js';
import { webhookFixture, type WebhookFixture } from './helpers/webhooks.js';

/** docs/design.md "webhook retry schedule", in ms after the event. */
const SCHEDULE = [0, 5_000, 300_000, 1_800_000, 7_200_000, 18_000_000, 36_000_000, 86_400_000];

const deliveries = async (f: WebhookFixture, query = '') => (await f.api('GET', `/api/v1/agent/webhooks/deliveries${query}`, { key: f.agent.apiKey })).body;

const detail = async (f: WebhookFixture, id: string) => (await f.api('GET', `/api/v1/agent/webhooks/deliveries/${id}`, { key: f.agent.apiKey })).body;

t.test('a failing receiver gets 8 attempts on the schedule, same id and body, then the event is failed', async (t) => {
  const f = await webhookFixture(t);
  f.receiver.reply = () => ({ status: 503 });
  const start = f.clock.now().getTime();
  await f.mail('retry me');
  await f.receiver.waitFor('message.received');
  await f.runOnce();
  for (let attempt = 2; attempt <= 8; attempt += 1) {
    f.clock.set(new Date(start + SCHEDULE[attempt - 1] - 1));
    await f.runOnce();
    t.equal(f.receiver.ofType('message.received').length, attempt - 1, `attempt ${attempt} not before its time`);
    f.clock.set(new Date(start + SCHEDULE[attempt - 1]));
    await f.runOnce();
    t.equal(f.receiver.ofType('message.received').length, attempt, `attempt ${attempt} at +${SCHEDULE[attempt - 1]} ms`);
  }
  f.clock.advance(7 * 24 * 3600_000);
  await f.runOnce();
  const received = f.receiver.ofType('message.received');
  t.equal(received.length, 8, 'no ninth attempt');
  t.equal(new Set(received.map((r) => r.id)).size, 1, 'same event id');
  t.equal(new Set(received.map((r) => r.body)).size, 1, 'same body byte for byte');
  t.ok(received.every((r) => r.signatureValid));
  t.same(
    received.map((r) => Number(r.timestamp) * 1000 - start),
    SCHEDULE,
    'each attempt signed at its own time',
  );
  const [item] = (await deliveries(f)).deliveries;
  t.match(item, { status: 'failed', attempts: 8, lastError: 'http_503', lastHttpStatus: 503 });
  const full = await detail(f, item.id);
  t.equal(full.attemptLog.length, 8);
  t.same(
    full.attemptLog.map((a: any) => a.number),
    [1, 2, 3, 4, 5, 6, 7, 8],
  );
  t.ok(full.attemptLog.every((a: any) => a.succeeded === false && a.error === 'http_503' && a.replay === 0));
  t.equal(JSON.stringify(full.event), received[0].body, 'the stored event is the body sent');
});

t.test('fails twice, then succeeds: delivered on the third attempt', async (t) => {
  const f = await webhookFixture(t);
  const start = f.clock.now().getTime();
  f.receiver.reply = (_event, all) => {
    const count = all.filter((r) => r.event?.type === 'message.received').length;
    return count <= 2 ? { status: count === 1 ? 500 : 429 } : { status: 204 };
  };
  await f.mail('third time lucky');
  await f.receiver.waitFor('message.received');
  await f.runOnce();
  f.clock.set(new Date(start + SCHEDULE[1]));
  await f.runOnce();
  f.clock.set(new Date(start + SCHEDULE[2]));
  await f.runOnce();
  f.clock.set(new Date(start + SCHEDULE[7]));
  await f.runOnce();
  t.equal(f.receiver.ofType('message.received').length, 3);
  const [item] = (await deliveries(f)).deliveries;
  t.match(item, { status: 'delivered', attempts: 3, lastHttpStatus: 204 });
  t.notOk('lastError' in item);
  const log = (await detail(f, item.id)).attemptLog;
  t.same(
    log.map((a: any) => [a.succeeded, a.httpStatus, a.error]),
    [
      [false, 500, 'http_500'],
      [false, 429, 'http_429'],
      [true, 204, undefined],
    ],
  );
});

t.test('a receiver that does not answer in time and one that redirects both fail', async (t) => {
  const f = await webhookFixture(t, { timeoutMs: 1000 });
  const start = f.clock.now().getTime();
  f.receiver.reply = (_event, all) =>
    all.filter((r) => r.event?.type === 'message.received').length === 1 ? 'hang' : { status: 302, headers: { location: '/elsewhere' } };
  await f.mail('slow');
  await f.receiver.waitFor('message.received');
  await f.runOnce();
  let [item] = (await deliveries(f)).deliveries;
  t.match(item, { status: 'pending', attempts: 1, lastError: 'timeout' });
  f.clock.set(new Date(start + SCHEDULE[1]));
  await f.runOnce();
  [item] = (await deliveries(f)).deliveries;
  t.match(item, { status: 'pending', attempts: 2, lastError: 'redirect', lastHttpStatus: 302 });
  t.equal(f.receiver.received.length, 3, 'verification + 2 attempts: the redirect was not followed');
  t.ok(f.receiver.received.every((r) => !r.body.includes('/elsewhere')));
});

t.test('a refused connection is recorded as connection_refused', async (t) => {
  const f = await webhookFixture(t, { verified: false });
  const key = f.agent.apiKey;
  const created = await f.api('POST', '/api/v1/agent/webhooks', { key, body: { url: 'http://127.0.0.1:9/closed' } });
  const result = await f.api('POST', `/api/v1/agent/webhooks/${created.body.id}/verify`, { key });
  t.same(result.body, { verified: false, status: 'registered', error: 'connection_refused' });
});

t.test('replay: only completed events, at most 3 times, same id and body', async (t) => {
  const f = await webhookFixture(t);
  const key = f.agent.apiKey;
  await f.mailFailingFirstAttempt('replay me');
  const [pending] = (await deliveries(f)).deliveries;
  const early = await f.api('POST', `/api/v1/agent/webhooks/deliveries/${pending.id}`, { key });
  t.equal(early.status, 409, 'a pending event cannot be replayed');
  f.receiver.reply = () => ({ status: 200 });
  f.clock.advance(SCHEDULE[1]);
  await f.runOnce();
  t.equal((await detail(f, pending.id)).status, 'delivered');
  for (let n = 1; n <= 3; n += 1) {
    if (n === 2) f.receiver.reply = () => ({ status: 500 });
    if (n === 3) f.receiver.reply = () => ({ status: 200 });
    const replay = await f.api('POST', `/api/v1/agent/webhooks/deliveries/${pending.id}`, { key });
    t.equal(replay.status, 200);
    t.match(replay.body, {
      id: pending.id,
      replays: n,
      replaysRemaining: 3 - n,
      status: n === 2 ? 'failed' : 'delivered',
      attempt: { replay: n, number: 2 + n },
    });
  }
  const fourth = await f.api('POST', `/api/v1/agent/webhooks/deliveries/${pending.id}`, { key });
  t.equal(fourth.status, 409);
  t.match(fourth.body.error, /3 times/);
  const received = f.receiver.ofType('message.received');
  t.equal(received.length, 5, '2 scheduled attempts + 3 replays');
  t.equal(new Set(received.map((r) => r.id)).size, 1);
  t.equal(new Set(received.map((r) => r.body)).size, 1);
  t.ok(received.every((r) => r.signatureValid));
  t.match(await detail(f, pending.id), { status: 'delivered', attempts: 5, replays: 3 });
  t.equal((await f.api('POST', '/api/v1/agent/webhooks/deliveries/00000000-0000-4000-8000-000000000000', { key })).status, 404);
});

t.test('the history pages 50 at a time, newest first, and keeps 30 days', async (t) => {
  const f = await webhookFixture(t);
  const accountId = (await f.app.services.auth.authenticate(f.agent.apiKey)).accountId;
  const mailbox = await f.app.services.mailbox.mailboxOfAccount(accountId);
  const raw = Buffer.from('Subject: bulk\r\nFrom: a@example.com\r\n\r\nhi\r\n');
  const parsed = await parseMessage(raw);
  await f.app.store.transaction(async () => {
    for (let i = 0; i < 55; i += 1) await f.app.services.mailbox.append(mailbox, 'INBOX', raw, parsed);
  });
  await f.runOnce();
  t.equal(f.receiver.ofType('message.received').length, 55);
  const first = await deliveries(f);
  t.equal(first.deliveries.length, 50);
  t.type(first.nextCursor, 'string');
  const second = await deliveries(f, `?before=${first.nextCursor}`);
  t.equal(second.deliveries.length, 5);
  t.equal(second.nextCursor, null);
  const uids = await Promise.all([...first.deliveries, ...second.deliveries].map(async (d: any) => Number((await detail(f, d.id)).event.data.uid)));
  t.same(
    uids,
    Array.from({ length: 55 }, (_, i) => 55 - i),
    'newest first, none twice',
  );
  t.equal((await f.api('GET', '/api/v1/agent/webhooks/deliveries?before=abc', { key: f.agent.apiKey })).status, 400);
  f.clock.advance(30 * 24 * 3600_000 + 1);
  t.same(await deliveries(f), { deliveries: [], nextCursor: null });
  t.equal((await f.api('GET', `/api/v1/agent/webhooks/deliveries/${first.deliveries[0].id}`, { key: f.agent.apiKey })).status, 404);
  t.equal(await f.app.services.webhookDispatch.prune(), 55, 'the sweep deletes them');
});

/**
 * There is no API that recreates a folder yet (IMAP DELETE/CREATE would), so the test
 * changes INBOX's uidValidity through the store, as a recreation would.
 */
const recreateInbox = async (f: WebhookFixture): Promise<void> => {
  const accountId = (await f.app.services.auth.authenticate(f.agent.apiKey)).accountId;
  const mailbox = await f.app.services.mailbox.mailboxOfAccount(accountId);
  f.app.store.db.prepare("UPDATE folders SET uid_validity = uid_validity + 1 WHERE mailbox_id = ? AND name = 'INBOX'").run(mailbox.id);
};

t.test('a changed INBOX uidValidity pauses the endpoint and cancels queued events until verified again', async (t) => {
  const f = await webhookFixture(t);
  const key = f.agent.apiKey;
  await f.mailFailingFirstAttempt('queued');
  await recreateInbox(f);
  f.clock.advance(SCHEDULE[1]);
  await f.runOnce();
  t.equal(f.receiver.ofType('message.received').length, 1, 'the queued retry is not sent');
  const [queued] = (await deliveries(f)).deliveries;
  t.match(queued, { status: 'cancelled', lastError: 'endpoint_paused' });
  t.match((await f.api('GET', '/api/v1/agent/webhooks', { key })).body.webhooks[0], { status: 'paused', pausedReason: 'uid_validity_changed' });
  f.receiver.reply = (event) =>
    event.type === 'webhook.verification' ? { status: 200, body: JSON.stringify({ challenge: event.data.challenge }) } : { status: 200 };
  await f.mail('while paused');
  await f.runOnce();
  t.equal(f.receiver.ofType('message.received').length, 1, 'nothing while paused');
  const replay = await f.api('POST', `/api/v1/agent/webhooks/deliveries/${queued.id}`, { key });
  t.equal(replay.status, 409);
  const verified = await f.api('POST', `/api/v1/agent/webhooks/${f.webhookId}/verify`, { key });
  t.same(verified.body, { verified: true, status: 'verified', httpStatus: 200 });
  await f.mail('after re-verify');
  const events = await f.receiver.waitFor('message.received', 2);
  const inbox = await f.api('GET', '/api/v1/agent/inbox', { key });
  t.same(events[1].event.data, { folder: 'INBOX', uidValidity: inbox.body.uidValidity, uid: '3', junk: false });
});

t.test('the pause is noticed at ingest too, before any queued event exists', async (t) => {
  const f = await webhookFixture(t);
  await recreateInbox(f);
  await f.mail('after recreation');
  await f.runOnce();
  t.equal(f.receiver.ofType('message.received').length, 0);
  t.match((await f.api('GET', '/api/v1/agent/webhooks', { key: f.agent.apiKey })).body.webhooks[0], { status: 'paused' });
});

/** The send service is issue 3's; its store writes the outbox topic, which is what webhooks read. */
const recordOutcome = async (f: WebhookFixture, submissionId: string) => {
  const principal = await f.app.services.auth.authenticate(f.agent.apiKey);
  const at = f.clock.now().getTime();
  await f.app.store.transaction(async () => {
    const [row] = await f.app.store.submissions.insert(
      {
        id: submissionId,
        accountId: principal.accountId,
        keyId: principal.keyId,
        messageId: `<${submissionId}@agents.localhost>`,
        contentHash: submissionId,
        fromAddress: f.agent.email,
        subject: 's',
        via: 'rest',
        createdAt: at,
        raw: Buffer.from('raw'),
      },
      [{ address: 'rcpt@example.com', domain: 'example.com', kind: 'to', status: 'queued' }],
      0,
    );
    await f.app.store.submissions.transition(row.id, { status: 'bounced', smtpCode: 550, enhancedCode: '5.1.1', diagnostic: 'no such user' }, at);
  });
};

t.test('message.delivery_updated goes only to endpoints that opted in, with the recipient outcome', async (t) => {
  const f = await webhookFixture(t, { events: ['message.received', 'message.delivery_updated'] });
  await recordOutcome(f, '11111111-1111-4111-8111-111111111111');
  const events = await f.receiver.waitFor('message.delivery_updated', 2);
  t.ok(events.every((e) => e.signatureValid));
  t.same(
    events.map((e) => e.event.data),
    [
      { submissionId: '11111111-1111-4111-8111-111111111111', recipient: 'rcpt@example.com', status: 'queued' },
      {
        submissionId: '11111111-1111-4111-8111-111111111111',
        recipient: 'rcpt@example.com',
        status: 'bounced',
        smtpCode: 550,
        enhancedCode: '5.1.1',
        diagnostic: 'no such user',
      },
    ],
  );
  t.equal(events[0].event.createdAt, f.clock.now().toISOString());

  const plain = await webhookFixture(t);
  await recordOutcome(plain, '22222222-2222-4222-8222-222222222222');
  await plain.mail('received is the default');
  await plain.receiver.waitFor('message.received');
  await plain.runOnce();
  t.equal(plain.receiver.ofType('message.delivery_updated').length, 0, 'not opted in: incoming only');
});

t.test('an endpoint that chose only message.delivery_updated gets no message.received', async (t) => {
  const f = await webhookFixture(t, { events: ['message.delivery_updated'] });
  await f.mail('not subscribed');
  await f.runOnce();
  t.equal(f.receiver.ofType('message.received').length, 0);
});
