import t from 'tap';
import { fullGc, releaseWhenQuiet } from '../src/workers/memory-release.js';

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
  const exposed = (globalThis as { gc?: () => void }).gc;
  t.equal(fullGc(), typeof exposed === 'function' ? exposed : null);
});
