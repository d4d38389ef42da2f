// Event-log ids are never given twice, whatever the sweep prunes: its readers (the event
// streams) read "id greater than my cursor" (src/store/webhook-events.ts). The outbox table
// that webhooks once read the same way is no longer written: the event log and the webhook
// events are written in the transaction of each change (src/services/webhooks/event-log.ts).
import { join } from 'node:path';
import Database from 'better-sqlite3';
import t, { type Test } from 'tap';
import type { ConfigLayer } from '../src/config/types.js';
import { ManualClock } from '../src/core/clock.js';
import type { App } from '../src/main.js';
import { startApp, type TestApp } from './helpers/app.js';
import { heardChanges } from './helpers/changes.js';
import { opened, openStream } from './helpers/event-stream.js';
import { deliverDirect, simpleMessage } from './helpers/mail.js';
import { webhookFixture } from './helpers/webhooks.js';
import { sweepRunOnce } from '../src/app/calendar-jobs.js';

const QUIET_HOURS_MS = 2 * 60 * 60 * 1000;
/** How long a test waits for an event that should come at once before it calls it lost. */
const LOST_AFTER_MS = 10_000;

/** The promise's value, or `lost` once `ms` have passed without it. */
const orLost = <T>(promise: Promise<T>, ms = LOST_AFTER_MS): Promise<T | 'lost'> =>
  Promise.race([promise, new Promise<'lost'>((resolve) => setTimeout(() => resolve('lost'), ms).unref())]);

const outboxCount = (app: App): number => app.store.db.prepare('SELECT count(*) FROM outbox').pluck().get() as number;

/** One message per subject into the INBOX of `email`. */
const deliverEach = async (app: App, email: string, subjects: string[]): Promise<void> => {
  for (const subject of subjects) await deliverDirect(app, [email], simpleMessage({ to: email, subject }));
};

/** Moves the clock past `quietMs`, sweeps as the scheduler would, and restarts the app on the same data. */
const sweepAndRestart = async (t: Test, app: App, clock: ManualClock, quietMs: number, overrides: ConfigLayer): Promise<TestApp> => {
  clock.advance(quietMs);
  await sweepRunOnce(app.services);
  await app.stop();
  return startApp(t, overrides, { clock });
};

/** An app on a data folder of its own (to start again on), with a ManualClock and a registered agent. */
const appToRestart = async (t: Test) => {
  const dataDir = t.testdir({});
  const clock = new ManualClock('2026-03-01T12:00:00Z');
  const first = await startApp(t, { dataDir }, { clock });
  return { dataDir, clock, first, agent: await first.register() };
};

t.test('a webhook gets the next message after the sweep emptied the outbox and the app restarted', async (t) => {
  const dataDir = t.testdir({});
  const f = await webhookFixture(t, { config: { dataDir } });
  for (let i = 1; i <= 5; i += 1) await f.mail(`before ${i}`);
  await f.receiver.waitFor('message.received', 5);
  // Every attempt recorded as delivered, so the restart retries none of them.
  await f.runOnce();

  const again = await sweepAndRestart(t, f.app, f.clock, QUIET_HOURS_MS, { dataDir, webhooks: { allowInsecure: true, timeoutMs: 5000 } });
  t.equal(outboxCount(again.app), 0, 'no change waits in the outbox table');
  await deliverEach(again.app, f.agent.email, ['after the quiet hour']);
  const received = await orLost(f.receiver.waitFor('message.received', 6));
  t.not(received, 'lost', 'the sixth message reaches the webhook');
  if (received !== 'lost') t.equal(received[5].event.data.uid, '6');
});

t.test('an event stream gets the next message after the sweep emptied the outbox and the app restarted', async (t) => {
  const { dataDir, clock, first, agent } = await appToRestart(t);
  const stream = openStream(t, first.baseUrl, agent.apiKey);
  await opened(stream);
  await deliverEach(first.app, agent.email, ['one', 'two', 'three', 'four', 'five']);
  const before = await stream.waitForCount(5);
  stream.close();

  const second = await sweepAndRestart(t, first.app, clock, QUIET_HOURS_MS, { dataDir });
  t.equal(outboxCount(second.app), 0, 'no change waits in the outbox table');
  // A client comes back naming the last event it has, as the eventsource client does.
  const resumed = openStream(t, second.baseUrl, agent.apiKey, { query: `lastEventId=${before[4].id}` });
  await opened(resumed);
  await deliverEach(second.app, agent.email, ['after the quiet hour']);
  const events = await orLost(resumed.waitForCount(1));
  t.not(events, 'lost', 'the sixth message reaches the stream');
  if (events !== 'lost') t.equal(events[0].data.data.uid, '6');
});

t.test('event-log sequence numbers are not given again after the history is pruned', async (t) => {
  const { dataDir, clock, first, agent } = await appToRestart(t);
  await deliverEach(first.app, agent.email, ['old 1', 'old 2', 'old 3']);
  await first.app.queues.webhooks.runOnce(clock.now());
  const highest = await first.app.store.webhookEvents.lastSeq(agent.userId);
  t.ok(highest >= 3, 'the messages were logged');

  // Past the history kept (limits.webhookHistoryDays): the sweep empties the log.
  const second = await sweepAndRestart(t, first.app, clock, 31 * 24 * 60 * 60 * 1000, { dataDir });
  t.equal(await second.app.store.webhookEvents.lastSeq(agent.userId), 0, 'the log is empty');
  await deliverEach(second.app, agent.email, ['new']);
  await second.app.queues.webhooks.runOnce(clock.now());
  t.ok((await second.app.store.webhookEvents.lastSeq(agent.userId)) > highest, 'the new event is numbered above every pruned one');
});

t.test('a change an earlier version left unread in the outbox table is logged at the next start, once', async (t) => {
  const dataDir = t.testdir({});
  const f = await webhookFixture(t, { config: { dataDir } });
  const stored = heardChanges(f.app.store, 'message.stored');
  await f.mail('left by the old version');
  await f.receiver.waitFor('message.received', 1);
  await f.app.queues.webhooks.settled();
  await f.app.stop();
  // What the earlier version left when it stopped before reading its outbox: the change, and no event.
  const db = new Database(join(dataDir, 'agentpost.db'));
  db.prepare("DELETE FROM webhook_events WHERE type = 'message.received'").run();
  db.prepare("INSERT INTO outbox (topic, payload, created_at) VALUES ('message.stored', ?, 0)").run(JSON.stringify(stored[0]));
  db.close();

  const again = await startApp(t, { dataDir, webhooks: { allowInsecure: true, timeoutMs: 5000 } }, { clock: f.clock });
  const received = await orLost(f.receiver.waitFor('message.received', 2));
  t.not(received, 'lost', 'the webhook gets the event the old version never wrote');
  if (received !== 'lost') t.equal(received[1].event.data.uid, received[0].event.data.uid, 'for the same message');
  t.equal(outboxCount(again.app), 0, 'the outbox table is emptied');
  await again.app.queues.webhooks.settled();
  await again.app.stop();
  const third = await startApp(t, { dataDir, webhooks: { allowInsecure: true, timeoutMs: 5000 } }, { clock: f.clock });
  await third.app.queues.webhooks.runOnce(f.clock.now());
  t.equal(f.receiver.ofType('message.received').length, 2, 'not logged a second time by the start after');
});
