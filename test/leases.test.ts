// Claims that name their node and run out (docs/design.md, "Several processes on one store"),
// seen in one process driving its queues by hand: a claim another node holds is left alone
// until its lease runs out, an outcome is recorded only by the node that holds the claim, and
// a node renews what it holds.
import t from 'tap';
import { ManualClock } from '../src/core/clock.js';
import { startApp, type TestApp } from './helpers/app.js';
import { smtpSend } from './helpers/smtp.js';
import { webhookFixture } from './helpers/webhooks.js';

const LEASE_MS = 60_000;

const leaseColumns = (app: TestApp, table: string, by: string) =>
  app.app.store.db.prepare(`SELECT ${by} AS holder, lease_until AS leaseUntil FROM ${table} ORDER BY 1`).all() as {
    holder: string | null;
    leaseUntil: number | null;
  }[];

t.test('a webhook event leased by another node is not attempted until the lease runs out; that node records nothing after', async (t) => {
  const f = await webhookFixture(t);
  f.app.queues.webhooks.driveManually();
  await f.mail('held elsewhere');
  const now = f.clock.now().getTime();
  const { webhookEvents } = f.app.store;
  const [event] = await f.app.store.transaction(() => webhookEvents.leaseDue(now, 10, [], 'other', now + LEASE_MS));
  t.equal(event.type, 'message.received');
  t.same(await f.app.store.transaction(() => webhookEvents.leaseDue(now, 10, [], 'main', now + LEASE_MS)), [], 'a live lease is not leased again');

  await f.runOnce();
  t.equal(f.receiver.ofType('message.received').length, 0, 'this node leaves it to the other');
  t.equal(await f.app.services.webhookDispatch.nextDueAt([]), null, 'and does not wake for it');

  f.clock.advance(LEASE_MS);
  await f.runOnce();
  const posted = f.receiver.ofType('message.received');
  t.equal(posted.length, 1, 'once the lease ran out, this node took it over');
  t.equal(posted[0].id, event.id, 'with its id');
  t.match(await webhookEvents.bySeq(event.seq), { status: 'delivered', attempts: 1 });
  t.same(leaseColumns(f, 'webhook_events', 'leased_by'), [{ holder: null, leaseUntil: null }], 'the lease is given up with the outcome');

  const late = await f.app.store.transaction(() =>
    webhookEvents.recordAttempt(
      event.seq,
      { replay: 0, at: now, durationMs: 1, httpStatus: 500, error: 'late' },
      { status: 'pending', nextAttemptAt: now },
      'other',
    ),
  );
  t.equal(late, false, "the other node's late outcome is not recorded");
  t.match(await webhookEvents.bySeq(event.seq), { status: 'delivered', attempts: 1 });
  t.equal((await webhookEvents.attemptsOf(event.seq)).length, 1);
});

t.test('a queued inbound message another node claimed is stored only once its lease runs out, and once', async (t) => {
  const clock = new ManualClock('2026-06-01T10:00:00Z');
  const app = await startApp(t, { smtp: { queue: { inlineLimit: 0, maxMessages: 100 } } }, { clock, manual: ['inbound'] });
  const agent = await app.register();
  await smtpSend(app.smtpPort, { from: 'someone@example.org', to: agent.email, subject: 'claimed elsewhere', text: 'x' });
  const now = clock.now().getTime();
  const { inboundQueue } = app.app.store;
  const [queued] = await app.app.store.transaction(() => inboundQueue.claimDue(now, 0, 10, 'other', now + LEASE_MS));
  t.ok(queued, 'claimed by the other node');

  t.match(await app.app.queues.inbound.runOnce(), { delivered: 0, next: now + LEASE_MS }, 'left alone, due when the lease runs out');
  clock.advance(LEASE_MS);
  t.match(await app.app.queues.inbound.runOnce(), { delivered: 1 }, 'taken over');
  const inbox = await app.api('GET', '/api/v1/agent/inbox', { key: agent.apiKey });
  t.same(
    inbox.body.emails.map((email: { subject: string }) => email.subject),
    ['claimed elsewhere'],
  );
  t.equal(
    await app.app.store.transaction(() => inboundQueue.remove(queued.id, 'other')),
    false,
    'the other node can no longer remove it (so it stores no copy)',
  );
});

t.test('a node renews the leases of the work it holds, and only those', async (t) => {
  const clock = new ManualClock('2026-06-01T10:00:00Z');
  const app = await startApp(t, { smtp: { queue: { inlineLimit: 0, maxMessages: 100 } } }, { clock, manual: ['inbound'] });
  const agent = await app.register();
  for (const subject of ['a', 'b']) await smtpSend(app.smtpPort, { from: 'someone@example.org', to: agent.email, subject, text: 'x' });
  const now = clock.now().getTime();
  const [mine, theirs] = await app.app.store.transaction(() => app.app.store.inboundQueue.claimDue(now, 0, 10, 'main', now + LEASE_MS));
  app.app.store.db.prepare("UPDATE inbound_queue SET claimed_by = 'other' WHERE id = ?").run(theirs.id);
  const claims = app.app.services.claims;
  claims.hold('inbound', [mine.id, theirs.id]);
  clock.advance(20_000);
  await claims.renew();
  t.same(
    leaseColumns(app, 'inbound_queue', 'claimed_by'),
    [
      { holder: 'main', leaseUntil: now + 20_000 + LEASE_MS },
      { holder: 'other', leaseUntil: now + LEASE_MS },
    ],
    "its own lease moved on; another node's is not its to renew",
  );
  claims.release('inbound', [mine.id, theirs.id]);
  t.same(claims.heldIds('inbound'), []);
});
