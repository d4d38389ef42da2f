// Outbox and event-log ids are never given twice, whatever the sweep prunes: after a quiet
// hour the sweep empties the outbox, and its readers (the webhooks, and through them the event
// streams) read "id greater than my cursor" (src/store/outbox.ts, src/store/webhook-events.ts).
import t from 'tap';
import { ManualClock } from '../src/core/clock.js';
import { startApp } from './helpers/app.js';
import { opened, openStream } from './helpers/event-stream.js';
import { deliverDirect, simpleMessage } from './helpers/mail.js';
import { webhookFixture } from './helpers/webhooks.js';
import { sweepRunOnce } from '../src/workers/jobs/sweep.js';

const QUIET_HOURS_MS = 2 * 60 * 60 * 1000;
/** How long a test waits for an event that should come at once before it calls it lost. */
const LOST_AFTER_MS = 10_000;

/** The promise's value, or `lost` once `ms` have passed without it. */
const orLost = <T>(promise: Promise<T>, ms = LOST_AFTER_MS): Promise<T | 'lost'> =>
  Promise.race([promise, new Promise<'lost'>((resolve) => setTimeout(() => resolve('lost'), ms).unref())]);

const outboxCount = (app: { store: { db: { prepare(sql: string): { pluck(): { get(): unknown } } } } }): number =>
  app.store.db.prepare('SELECT count(*) FROM outbox').pluck().get() as number;

t.test('a webhook gets the next message after the sweep emptied the outbox and the app restarted', async (t) => {
  const dataDir = t.testdir({});
  const f = await webhookFixture(t, { config: { dataDir } });
  for (let i = 1; i <= 5; i += 1) await f.mail(`before ${i}`);
  await f.receiver.waitFor('message.received', 5);
  // Every attempt recorded as delivered, so the restart retries none of them.
  await f.runOnce();

  f.clock.advance(QUIET_HOURS_MS);
  sweepRunOnce(f.app.services);
  t.equal(outboxCount(f.app), 0, 'the sweep pruned every consumed row');
  await f.app.stop();

  const again = await startApp(t, { dataDir, webhooks: { allowInsecure: true, timeoutMs: 5000 } }, { clock: f.clock });
  await deliverDirect(again.app, [f.agent.email], simpleMessage({ to: f.agent.email, subject: 'after the quiet hour' }));
  const received = await orLost(f.receiver.waitFor('message.received', 6));
  t.not(received, 'lost', 'the sixth message reaches the webhook');
  if (received !== 'lost') t.equal(received[5].event.data.uid, '6');
});

t.test('an event stream gets the next message after the sweep emptied the outbox and the app restarted', async (t) => {
  const dataDir = t.testdir({});
  const clock = new ManualClock('2026-03-01T12:00:00Z');
  const first = await startApp(t, { dataDir }, { clock });
  const agent = await first.register();
  const stream = openStream(t, first.baseUrl, agent.apiKey);
  await opened(stream);
  for (let i = 1; i <= 5; i += 1) await deliverDirect(first.app, [agent.email], simpleMessage({ to: agent.email, subject: `before ${i}` }));
  const before = await stream.waitForCount(5);
  stream.close();

  clock.advance(QUIET_HOURS_MS);
  sweepRunOnce(first.app.services);
  t.equal(outboxCount(first.app), 0, 'the sweep pruned every consumed row');
  await first.app.stop();

  const second = await startApp(t, { dataDir }, { clock });
  // A client comes back naming the last event it has, as the eventsource client does.
  const resumed = openStream(t, second.baseUrl, agent.apiKey, { query: `lastEventId=${before[4].id}` });
  await opened(resumed);
  await deliverDirect(second.app, [agent.email], simpleMessage({ to: agent.email, subject: 'after the quiet hour' }));
  const events = await orLost(resumed.waitForCount(1));
  t.not(events, 'lost', 'the sixth message reaches the stream');
  if (events !== 'lost') t.equal(events[0].data.data.uid, '6');
});

t.test('event-log sequence numbers are not given again after the history is pruned', async (t) => {
  const dataDir = t.testdir({});
  const clock = new ManualClock('2026-03-01T12:00:00Z');
  const first = await startApp(t, { dataDir }, { clock });
  const agent = await first.register();
  for (let i = 1; i <= 3; i += 1) await deliverDirect(first.app, [agent.email], simpleMessage({ to: agent.email, subject: `old ${i}` }));
  await first.app.workers.webhooks.runOnce(clock.now());
  const highest = first.app.store.webhookEvents.lastSeq(agent.userId);
  t.ok(highest >= 3, 'the messages were logged');
  // Past the history kept (limits.webhookHistoryDays): the sweep empties the log.
  clock.advance(31 * 24 * 60 * 60 * 1000);
  sweepRunOnce(first.app.services);
  t.equal(first.app.store.webhookEvents.lastSeq(agent.userId), 0, 'the log is empty');
  await first.app.stop();

  const second = await startApp(t, { dataDir }, { clock });
  await deliverDirect(second.app, [agent.email], simpleMessage({ to: agent.email, subject: 'new' }));
  await second.app.workers.webhooks.runOnce(clock.now());
  t.ok(second.app.store.webhookEvents.lastSeq(agent.userId) > highest, 'the new event is numbered above every pruned one');
});
