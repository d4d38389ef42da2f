// src/runtime/calendar.ts and src/runtime/cron.ts: calendar jobs are due rows, each period's run
// taken once whoever asks for it, at the times node-cron's own matcher agrees with.
import { join } from 'node:path';
import cron from 'node-cron';
import fc from 'fast-check';
import t from 'tap';
import { ManualClock } from '../src/core/clock.js';
import { createLogger } from '../src/core/logger.js';
import { Calendar } from '../src/runtime/calendar.js';
import { nextCronTime } from '../src/runtime/cron.js';
import { CalendarService } from '../src/services/calendar/calendar.js';
import { Store } from '../src/store/index.js';

const silent = createLogger('silent', () => {});

t.test('nextCronTime is the first second after the given time that node-cron matches', async () => {
  const expressions = ['0 */10 * * * *', '30 * * * * *', '*/20 * * * * *', '0 17 3 * * *', '15 0 12 * * 1', '0 0 0 L * *', '0 30 9 1 * *', '0 0 * * *'];
  fc.assert(
    fc.property(fc.constantFrom(...expressions), fc.integer({ min: Date.parse('2026-01-01'), max: Date.parse('2029-12-31') }), (expression, start) => {
      const after = new Date(start);
      const next = nextCronTime(expression, after);
      const matcher = cron.createTask(expression, () => undefined);
      if (!matcher.match(next) || next.getTime() <= after.getTime() || next.getMilliseconds() !== 0) return false;
      // No second between them matches (checked over the last hour before it, or all of them when closer).
      const from = Math.max(Math.floor(after.getTime() / 1000) * 1000 + 1000, next.getTime() - 3_600_000);
      for (let at = from; at < next.getTime(); at += 1000) if (matcher.match(new Date(at))) return false;
      return true;
    }),
    { numRuns: 100 },
  );
});

t.test('a period runs once whichever of two processes asks; a missed period runs once at the next start', async (t) => {
  const file = join(t.testdir({}), 'agentpost.db');
  const clock = new ManualClock('2026-06-01T10:00:00');
  const ran: string[] = [];
  const job = { name: 'sweep', schedule: '0 */10 * * * *', run: (now: Date) => void ran.push(now.toISOString()) };
  // Two processes on one data folder: each has its own connection, calendar and runner.
  const stores = [Store.open(file), Store.open(file)];
  t.teardown(() => stores.forEach((store) => store.close()));
  const calendars = stores.map((store, i) => new Calendar(new CalendarService(store, clock, `node-${i + 1}`), silent));
  for (const calendar of calendars) await calendar.register([job], clock.now());

  const first = await calendars[0].run(clock.now().getTime());
  t.same(first.ran, [], 'nothing due before its first time');
  t.equal(first.next, new Date('2026-06-01T10:10:00').getTime(), 'due at the next match after registration');

  clock.set('2026-06-01T10:10:00');
  const reports = await Promise.all(calendars.map((calendar) => calendar.run(clock.now().getTime())));
  t.same(reports.map((report) => report.ran.length).sort(), [0, 1], 'one of the two took the run');
  t.equal(ran.length, 1);
  t.equal(reports[0].next, new Date('2026-06-01T10:20:00').getTime(), 'the row moved to the next period');

  // Down for an hour: the missed periods are one run, and the next is the next match after now.
  clock.set('2026-06-01T11:25:00');
  const late = await calendars[1].run(clock.now().getTime());
  t.same(late.ran, ['sweep']);
  t.equal(late.next, new Date('2026-06-01T11:30:00').getTime());
  t.equal(ran.length, 2);
  t.equal((await stores[0].scheduledJobs.byName('sweep'))?.lastError, null, 'recorded as finished without an error');
});

t.test('a changed schedule starts over from its next time; a failed job is recorded and the calendar goes on', async (t) => {
  const store = Store.open(join(t.testdir({}), 'agentpost.db'));
  t.teardown(() => store.close());
  const clock = new ManualClock('2026-06-01T10:00:00');
  const calendar = new Calendar(new CalendarService(store, clock, 'main'), silent);
  await calendar.register([{ name: 'recheck', schedule: '0 17 3 * * *', run: () => undefined }], clock.now());
  t.equal((await store.scheduledJobs.byName('recheck'))?.nextRunAt, new Date('2026-06-02T03:17:00').getTime());
  const failing = {
    name: 'recheck',
    schedule: '0 0 * * * *',
    run: () => {
      throw new Error('dns down');
    },
  };
  await calendar.register([failing], clock.now());
  t.equal((await store.scheduledJobs.byName('recheck'))?.nextRunAt, new Date('2026-06-01T11:00:00').getTime(), 'the new schedule applies at once');
  await calendar.register([failing], new Date('2026-06-01T10:30:00'));
  t.equal((await store.scheduledJobs.byName('recheck'))?.nextRunAt, new Date('2026-06-01T11:00:00').getTime(), 'the same schedule keeps its row');
  clock.set('2026-06-01T11:00:00');
  const report = await calendar.run(clock.now().getTime());
  t.same(report.ran, ['recheck']);
  t.equal((await store.scheduledJobs.byName('recheck'))?.lastError, 'dns down');
  t.equal(report.next, new Date('2026-06-01T12:00:00').getTime());
});
