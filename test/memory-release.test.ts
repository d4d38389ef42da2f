import t from 'tap';
import { fullGc, releaseWhenQuiet } from '../src/runtime/memory-release.js';

const wait = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

t.test('a full GC runs once after work, when things are quiet, and not again until more work', async (t) => {
  let collected = 0;
  const quiet = releaseWhenQuiet(20, () => {
    collected += 1;
  });
  t.teardown(quiet.stop);
  await wait(100);
  t.equal(collected, 0, 'no work, nothing to give back');
  quiet.touch();
  await wait(150);
  t.equal(collected, 1, 'one collection after the burst');
  await wait(100);
  t.equal(collected, 1, 'and no more while nothing happens');
});

t.test("the collection is V8's own gc when the process exposes it, and nothing otherwise", async (t) => {
  const holder = globalThis as { gc?: (options?: unknown) => void };
  const exposed = holder.gc;
  t.teardown(() => {
    holder.gc = exposed;
  });
  holder.gc = undefined;
  t.equal(fullGc(), null, 'without --expose-gc nothing is collected');
  const calls: unknown[][] = [];
  holder.gc = (...args: unknown[]) => {
    calls.push(args);
  };
  fullGc()?.();
  // V8 12 (Node 22) and later: the last-resort flavour, which also hands freed pages back.
  const lastResort = Number(process.versions.v8.split('.')[0]) >= 12;
  t.same(calls, [lastResort ? [{ type: 'major', execution: 'sync', flavor: 'last-resort' }] : []], `V8 ${process.versions.v8}`);
});

t.test('work within the quiet period postpones the collection; stop cancels it', async (t) => {
  let collected = 0;
  const quiet = releaseWhenQuiet(60, () => {
    collected += 1;
  });
  quiet.touch();
  for (let i = 0; i < 4; i += 1) {
    await wait(30);
    quiet.touch();
  }
  t.equal(collected, 0, 'never quiet for 60 ms while work came every 30 ms');
  await wait(150);
  t.equal(collected, 1, 'collected once it was');
  quiet.touch();
  quiet.stop();
  await wait(150);
  t.equal(collected, 1, 'nothing after stop');
});
