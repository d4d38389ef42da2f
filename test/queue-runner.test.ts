// src/runtime/queue-runner.ts: one loop per queue, woken by kicks and by one timer set to the
// queue's next due time; one run at a time; stop waits for the run in progress.
import { setTimeout as sleep } from 'node:timers/promises';
import t from 'tap';
import { systemClock } from '../src/core/clock.js';
import { createLogger } from '../src/core/logger.js';
import { type NextRun, QueueRunner, type QueueWork } from '../src/runtime/queue-runner.js';

const silent = createLogger('silent', () => {});

/** A queue whose runs are recorded and whose answers and pauses the test sets. */
const recordingWork = (answer: () => NextRun = () => null, pauseMs = 0) => {
  const runs: number[] = [];
  let active = 0;
  let overlapped = false;
  const work: QueueWork = {
    async run(now) {
      active += 1;
      overlapped ||= active > 1;
      runs.push(now);
      if (pauseMs > 0) await sleep(pauseMs);
      active -= 1;
      return { next: answer() };
    },
  };
  return { work, runs, overlapped: () => overlapped };
};

t.test('kicks within the delay share one run; a kick during a run asks for exactly one more', async (t) => {
  const { work, runs, overlapped } = recordingWork(() => null, 40);
  const runner = new QueueRunner('test', work, systemClock, silent, 20);
  for (let i = 0; i < 5; i += 1) runner.kick();
  await sleep(30);
  t.equal(runs.length, 1, 'five kicks, one run');
  for (let i = 0; i < 5; i += 1) runner.kick();
  await runner.idle();
  t.equal(runs.length, 2, 'kicks during the run: one more run after it');
  t.notOk(overlapped(), 'never two runs at once');
  await runner.stop();
});

t.test("the run's next due time sets the one timer; null waits for a kick", async (t) => {
  let answers: NextRun[] = [];
  const { work, runs } = recordingWork(() => answers.shift() ?? null);
  const runner = new QueueRunner('test', work, systemClock, silent);
  answers = [Date.now() + 60, null];
  runner.kick();
  await sleep(20);
  t.equal(runs.length, 1, 'the kick ran it');
  await sleep(80);
  t.equal(runs.length, 2, 'woken at the due time it answered');
  await sleep(100);
  t.equal(runs.length, 2, 'no polling: nothing runs until something is due or kicked');
  await runner.stop();
});

t.test('a due time already passed runs again at once; a failed run is retried, not lost', async (t) => {
  let calls = 0;
  const work: QueueWork = {
    async run(now) {
      calls += 1;
      if (calls === 1) return { next: now };
      if (calls === 2) throw new Error('store unavailable');
      return { next: null };
    },
  };
  const errors: string[] = [];
  const logger = { ...silent, error: (message: string) => errors.push(message) };
  const runner = new QueueRunner('test', work, systemClock, logger);
  runner.kick();
  await sleep(50);
  t.equal(calls, 2, 'run again at once, and that run failed');
  t.same(errors, ['queue run failed']);
  await runner.stop();
});

t.test('stop waits for the run in progress, aborts it, and lets work it started settle; no run after', async (t) => {
  let aborted = false;
  let settled = false;
  let runs = 0;
  const work: QueueWork = {
    async run(_now, signal) {
      runs += 1;
      await sleep(50);
      aborted = signal.aborted;
      return { next: Date.now() };
    },
    async settle() {
      await sleep(10);
      settled = true;
    },
  };
  const runner = new QueueRunner('test', work, systemClock, silent);
  runner.kick();
  await sleep(10);
  await runner.stop();
  t.ok(aborted, 'the run saw the abort');
  t.ok(settled, 'stop waited for what the run started');
  runner.kick();
  await sleep(30);
  t.equal(runs, 1, 'nothing runs after stop, however it is kicked or due');
});

t.test('a queue driven by hand runs only when told, and runOnce returns its report', async (t) => {
  const { work, runs } = recordingWork(() => Date.now());
  const runner = new QueueRunner('test', work, systemClock, silent);
  runner.driveManually();
  runner.kick();
  await sleep(20);
  t.equal(runs.length, 0, 'a kick does nothing');
  const report = await runner.runOnce(new Date('2026-05-01T00:00:00Z'));
  t.same(runs, [Date.parse('2026-05-01T00:00:00Z')], 'run at the time given');
  t.type(report.next, 'number');
  await sleep(20);
  t.equal(runs.length, 1, 'its due time starts nothing either');
  await runner.stop();
});
