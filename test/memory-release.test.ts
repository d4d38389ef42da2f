import t from 'tap';
import { fullGc, releaseWhenQuiet } from '../src/workers/memory-release.js';

const wait = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

t.test('a full GC runs once after work, when things are quiet, and not again until more work', async (t) => {
  let collected = 0;
  const quiet = releaseWhenQuiet(20, () => { collected += 1; });
  t.teardown(quiet.stop);
  await wait(100);
  t.equal(collected, 0, 'no work, nothing to give back');
  quiet.touch();
  await wait(150);
  t.equal(collected, 1, 'one collection after the burst');
  await wait(100);
  t.equal(collected, 1, 'and no more while nothing happens');
});

t.test('V8 hands this thread its gc function without --expose-gc on the command line', async (t) => {
  const gc = fullGc();
  t.type(gc, 'function');
  t.doesNotThrow(() => gc?.());
});
