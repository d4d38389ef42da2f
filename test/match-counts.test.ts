// The exact match counts a search keeps while the index is unchanged (src/store/match-counts.ts).
import t from 'tap';
import { MatchCounts } from '../src/store/match-counts.js';

/** A count function that says how often it ran. */
const counter = (value: number) => {
  const calls = { n: 0 };
  const count = (): number => {
    calls.n += 1;
    return value;
  };
  return { calls, count };
};

t.test('a count is taken once per index version and taken again once the version moves', async (t) => {
  const counts = new MatchCounts();
  const word = counter(7);
  t.equal(counts.get('word', 1, word.count), 7);
  t.equal(counts.get('word', 1, word.count), 7);
  t.equal(word.calls.n, 1, 'the second ask is answered from memory');
  const changed = counter(8);
  t.equal(counts.get('word', 2, changed.count), 8, 'a new version counts again');
  t.equal(counts.get('word', 1, counter(9).count), 9, 'any other version, older too, counts again');
});

t.test('past its capacity the least recently used count goes first', async (t) => {
  const counts = new MatchCounts(2);
  counts.get('a', 1, () => 1);
  counts.get('b', 1, () => 2);
  counts.get('a', 1, () => 1); // a is now the most recent
  counts.get('c', 1, () => 3);
  const a = counter(1);
  const b = counter(2);
  counts.get('a', 1, a.count);
  counts.get('b', 1, b.count);
  t.same([a.calls.n, b.calls.n], [0, 1], 'b went, a stayed');
});
