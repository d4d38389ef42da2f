// The exact match counts a search keeps with the index position they were taken at (src/store/match-counts.ts).
import t from 'tap';
import { type Counted, type IndexPosition, MatchCounts } from '../src/store/match-counts.js';

const at = (version: number): IndexPosition => ({ version, seq: version, high: version * 10 });

/** A count function that records the earlier count it was given each time it ran. */
const counter = (value: number) => {
  const calls: (Counted | undefined)[] = [];
  const count = (earlier: Counted | undefined): number => {
    calls.push(earlier);
    return value;
  };
  return { calls, count };
};

t.test('a count is taken once per index version; once the version moves, the earlier count is handed to the next', async (t) => {
  const counts = new MatchCounts();
  const first = counter(7);
  t.equal(counts.get('word', at(1), first.count), 7);
  t.equal(counts.get('word', at(1), first.count), 7);
  t.same(first.calls, [undefined], 'the second ask is answered from memory');
  const second = counter(8);
  t.equal(counts.get('word', at(2), second.count), 8, 'a new version counts again');
  t.same(second.calls, [{ ...at(1), total: 7 }], 'given the count and position before');
  const third = counter(9);
  t.equal(counts.get('word', at(1), third.count), 9, 'any other version, an older one too, counts again');
  t.same(third.calls, [{ ...at(2), total: 8 }]);
  t.equal(counts.get('other', at(1), counter(1).count), 1, 'each match has its own count');
});

t.test('past its capacity the least recently used count goes first', async (t) => {
  const counts = new MatchCounts(2);
  counts.get('a', at(1), () => 1);
  counts.get('b', at(1), () => 2);
  counts.get('a', at(1), () => 1); // a is now the most recent
  counts.get('c', at(1), () => 3);
  const a = counter(1);
  const b = counter(2);
  counts.get('a', at(1), a.count);
  counts.get('b', at(1), b.count);
  t.same([a.calls.length, b.calls.length], [0, 1], 'b went, a stayed');
});
