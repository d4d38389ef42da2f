import t from 'tap';
import { ManualClock } from '../src/core/clock.js';
import { rfc5322Date } from '../src/services/mail/trace.js';
import { startApp, type TestApp } from './helpers/app.js';
import { hostedHolder, MX_HOST, startDomainApp } from './helpers/domains.js';
import { inboundDelivered, storedRaw } from './helpers/mail.js';
import { smtpSend } from './helpers/smtp.js';

/**
 * The inbound queue (src/services/mail/inbound.ts): past `smtp.queue.inlineLimit` deliveries
 * in progress the MX commits a message to the queue, answers 250, and the drain
 * (src/runtime/queues/inbound.ts) delivers it after. Here `inlineLimit: 0` queues every
 * message and `inboundDrain: false` leaves the drain to the test, so each step can be seen.
 */

const QUEUE_EVERYTHING = { smtp: { queue: { inlineLimit: 0, maxMessages: 100 } } };

const inbox = async (app: TestApp, key: string) =>
  (await app.api('GET', '/api/v1/agent/inbox', { key })).body as { totalMessages: number; emails: { id: string; subject: string }[] };
/** The INBOX's subjects, newest first. */
const subjects = async (app: TestApp, key: string) => (await inbox(app, key)).emails.map((email) => email.subject);
const inboundPart = async (app: TestApp) =>
  (await app.api('GET', '/api/v1/status')).body.parts.inbound as { status: string; depth: number; oldestAgeSeconds: number };
const send = (app: TestApp, to: string, subject: string) => smtpSend(app.smtpPort, { from: 'someone@example.org', to, subject, text: `${subject}\n` });
const drain = async (app: TestApp) => {
  await app.app.queues.inbound.runOnce();
};

t.test('one message at a time is in its mailbox before its 250 (the default: no burst, no queue)', async (t) => {
  const app = await startApp(t, {}, { manual: ['inbound'] });
  const agent = await app.register();
  t.match((await send(app, agent.email, 'at once')).response, /^250 /);
  t.same(await subjects(app, agent.apiKey), ['at once'], 'visible with no drain at all');
  t.equal((await inboundPart(app)).depth, 0);
});

t.test('a queued message is answered 250, waits in the queue, and is delivered in arrival order with its 250 time', async (t) => {
  const clock = new ManualClock('2026-06-01T10:00:00Z');
  const app = await startApp(t, QUEUE_EVERYTHING, { clock, manual: ['inbound'] });
  const agent = await app.register();
  for (const subject of ['first', 'second', 'third']) t.match((await send(app, agent.email, subject)).response, /^250 /, `${subject}: 250`);
  t.equal((await inbox(app, agent.apiKey)).totalMessages, 0, 'not in the mailbox before the drain');
  const waiting = await inboundPart(app);
  t.equal(waiting.depth, 3, 'the status page counts the queued messages');
  t.equal(waiting.status, 'ok');

  const answeredAt = clock.now();
  clock.advance(90_000);
  await drain(app);
  const delivered = await inbox(app, agent.apiKey);
  t.same(
    delivered.emails.map((email) => [email.subject, email.id]),
    [
      ['third', '3'],
      ['second', '2'],
      ['first', '1'],
    ],
    'each once, UIDs in the order of the 250s',
  );
  const raw = (await storedRaw(app.app, agent.email, 1)).toString();
  const trace = raw.slice(0, raw.indexOf('\r\nAuthentication-Results:'));
  t.equal(trace.slice(trace.lastIndexOf('; ') + 2), rfc5322Date(answeredAt), 'the trace field carries the time of the 250, not of the delivery');
  t.same(
    app.app.store.db.prepare('SELECT DISTINCT received_at AS at FROM messages').all(),
    [{ at: answeredAt.getTime() }],
    'so does the arrival time (IMAP INTERNALDATE)',
  );
  t.equal((await inboundPart(app)).depth, 0, 'the queue is empty');
});

t.test('a queue of many batches is delivered batch after batch in the order of its 250s, each message once', async (t) => {
  const clock = new ManualClock('2026-06-01T10:00:00Z');
  const app = await startApp(t, QUEUE_EVERYTHING, { clock, manual: ['inbound'] });
  const agent = await app.register();
  // More than two batches (16 each), so one batch commits while the next is prepared.
  const sent = Array.from({ length: 40 }, (_, i) => `message ${String(i).padStart(2, '0')}`);
  for (const subject of sent) await send(app, agent.email, subject);
  clock.advance(90_000);
  // Past the burst gap (100 ms of quiet, src/runtime/queues/inbound.ts): full batches, two in flight.
  await new Promise((resolve) => setTimeout(resolve, 150));
  await drain(app);
  const delivered = (await app.api('GET', '/api/v1/agent/inbox?limit=100', { key: agent.apiKey })).body as { emails: { id: string; subject: string }[] };
  const byUid = [...delivered.emails].sort((a, b) => Number(a.id) - Number(b.id));
  t.same(
    byUid.map((email) => email.subject),
    sent,
    'UIDs in the order of the 250s',
  );
  t.same(
    byUid.map((email) => Number(email.id)),
    sent.map((_, i) => i + 1),
    'dense',
  );
  t.equal((await inboundPart(app)).depth, 0, 'the queue is empty');
});

t.test('queued mail outlives a stop: the next start delivers it', async (t) => {
  const dataDir = t.testdir({});
  const first = await startApp(t, { dataDir, ...QUEUE_EVERYTHING }, { manual: ['inbound'] });
  const agent = await first.register();
  await send(first, agent.email, 'before the stop');
  await send(first, agent.email, 'also before the stop');
  await first.app.stop();

  const second = await startApp(t, { dataDir });
  await inboundDelivered(second.app);
  t.same(await subjects(second, agent.apiKey), ['also before the stop', 'before the stop'], 'both delivered once, in order, by the start');
  t.equal((await inboundPart(second)).depth, 0);
});

t.test('while a message waits, a later one queues behind it even with no burst: the 250s order the mailbox', async (t) => {
  const dataDir = t.testdir({});
  const first = await startApp(t, { dataDir, ...QUEUE_EVERYTHING }, { manual: ['inbound'] });
  const agent = await first.register();
  await send(first, agent.email, 'queued before the stop');
  await first.app.stop();

  // The default inlineLimit: one message alone would be delivered before its 250.
  const second = await startApp(t, { dataDir }, { manual: ['inbound'] });
  await send(second, agent.email, 'sent alone after the start');
  t.equal((await inbox(second, agent.apiKey)).totalMessages, 0, 'queued behind the waiting one');
  await drain(second);
  t.same(
    (await inbox(second, agent.apiKey)).emails.map((email) => [email.subject, email.id]),
    [
      ['sent alone after the start', '2'],
      ['queued before the stop', '1'],
    ],
  );
});

t.test('at smtp.queue.maxMessages waiting, the MX delivers before its 250 again', async (t) => {
  const app = await startApp(t, { smtp: { queue: { inlineLimit: 0, maxMessages: 2 } } }, { manual: ['inbound'] });
  const agent = await app.register();
  for (const subject of ['queued 1', 'queued 2', 'past the bound']) await send(app, agent.email, subject);
  t.same(await subjects(app, agent.apiKey), ['past the bound'], 'the third is in its mailbox at its 250');
  t.equal((await inboundPart(app)).depth, 2);
  await drain(app);
  t.equal((await inbox(app, agent.apiKey)).totalMessages, 3);
});

t.test('a queued message whose delivery fails stays queued, is tried again later, and is delivered once', async (t) => {
  const clock = new ManualClock('2026-06-01T10:00:00Z');
  const app = await startApp(t, QUEUE_EVERYTHING, { clock, manual: ['inbound'] });
  const agent = await app.register();
  await send(app, agent.email, 'fails first');
  // A row the service cannot read: what any failure before the commit looks like to the drain.
  const db = app.app.store.db;
  const envelope = (db.prepare('SELECT envelope FROM inbound_queue').get() as { envelope: string }).envelope;
  db.prepare("UPDATE inbound_queue SET envelope = '{'").run();
  await drain(app);
  t.equal((await inbox(app, agent.apiKey)).totalMessages, 0, 'not delivered');
  const row = db.prepare('SELECT attempts, due_at AS dueAt FROM inbound_queue').get() as { attempts: number; dueAt: number };
  t.same(row, { attempts: 1, dueAt: clock.now().getTime() + 1_000 }, 'postponed by a second after the first failure');
  await drain(app);
  t.equal((await inbox(app, agent.apiKey)).totalMessages, 0, 'not tried again before it is due');

  db.prepare('UPDATE inbound_queue SET envelope = ?').run(envelope);
  clock.advance(1_000);
  await drain(app);
  t.same(await subjects(app, agent.apiKey), ['fails first'], 'delivered once when due');
  t.equal((await inboundPart(app)).depth, 0);
});

t.test('a queued message to an alias removed before its delivery is dropped, not delivered elsewhere', async (t) => {
  const { app, dns } = await startDomainApp(t, { smtp: { hostname: MX_HOST, queue: { inlineLimit: 0, maxMessages: 100 } } }, { manual: ['inbound'] });
  const { holder, key, domain } = await hostedHolder(app, dns, 'team.example');
  const alias = (await app.api('POST', `/api/user/domains/${domain.id}/aliases`, { key, body: { localPart: 'support', mailbox: holder.email } })).body;
  t.match((await send(app, 'support@team.example', 'to the alias')).response, /^250 /);
  await send(app, holder.email, 'to the mailbox');
  t.equal((await app.api('DELETE', `/api/user/domains/${domain.id}/aliases/${alias.id}`, { key })).status, 200);
  await drain(app);
  t.same(await subjects(app, holder.apiKey), ['to the mailbox'], "only the message to the mailbox; the alias's is gone with the alias");
  t.equal((await inboundPart(app)).depth, 0, 'nothing left to retry');
});
