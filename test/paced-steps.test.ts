// Steps sized by time (src/core/paced-steps.ts), on a clock the test moves: each step's work
// "takes" its items times a cost per item.
import t from 'tap';
import { pacedSteps } from '../src/core/paced-steps.js';

const items = Array.from({ length: 5000 }, (_, index) => index);

const run = async (costOfItem: (item: number) => number, options = { first: 100, min: 25, max: 500, targetMs: 8 }) => {
  let clock = 0;
  const sizes: number[] = [];
  const done: number[] = [];
  await pacedSteps(items, { ...options, now: () => clock }, (slice) => {
    sizes.push(slice.length);
    done.push(...slice);
    clock += slice.reduce((sum, item) => sum + costOfItem(item), 0);
    return undefined;
  });
  return { sizes, done };
};

t.test('every item once, in order, in steps of about the target time', async (t) => {
  const { sizes, done } = await run(() => 0.1);
  t.same(done, items);
  t.equal(sizes[0], 100, 'the first step before any pace is known');
  t.same(new Set(sizes.slice(1, -1)), new Set([80]), '8 ms at 0.1 ms an item');
});

t.test('the step follows the pace as it changes, within min and max', async (t) => {
  // Slow (a cold start) for the first 1,000 items, then 20 times faster.
  const { sizes, done } = await run((item) => (item < 1000 ? 0.4 : 0.02));
  t.same(done, items);
  t.equal(sizes[1], 25, 'slow: 20 would do, the minimum is 25');
  t.equal(sizes.at(-2), 400, 'fast: 400 items of 0.02 ms');
  const { sizes: free } = await run(() => 0);
  t.same(new Set(free.slice(1, -1)), new Set([500]), 'work that takes no time: the maximum');
});

t.test('a step returning false stops the rest', async (t) => {
  const seen: number[] = [];
  await pacedSteps(items, { first: 10, min: 10, max: 10, targetMs: 8 }, (slice) => {
    seen.push(...slice);
    return seen.length < 30 ? undefined : false;
  });
  t.equal(seen.length, 30);
});
