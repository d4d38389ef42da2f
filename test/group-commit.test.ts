import { join } from 'node:path';
import Database from 'better-sqlite3';
import t, { type Test } from 'tap';
import { GroupCommitter } from '../src/store/group-commit.js';
import { ConnectionTurns } from '../src/store/unit.js';
import { Store } from '../src/store/index.js';

/** src/store/group-commit.ts: one transaction per turn, independent outcomes, durable before settling. */

const openStore = (t: Test) => {
  const file = join(t.testdir({}), 'agentpost.db');
  const store = Store.open(file);
  t.teardown(() => store.close());
  store.db.exec('CREATE TABLE items (name TEXT PRIMARY KEY)');
  const insert = (name: string) => () => store.db.prepare('INSERT INTO items (name) VALUES (?)').run(name).changes;
  return { file, store, insert };
};

t.test('jobs of one turn share a transaction; every promise settles with its own outcome', async (t) => {
  const { file, store, insert } = openStore(t);
  const results = await Promise.allSettled([
    store.groupCommit(insert('a')),
    store.groupCommit(insert('a')), // violates the primary key
    store.groupCommit(insert('b')),
    store.groupCommit(() => {
      insert('c')();
      throw new Error('after a write');
    }),
  ]);
  t.same(
    results.map((result) => result.status),
    ['fulfilled', 'rejected', 'fulfilled', 'rejected'],
  );
  t.equal((results[0] as PromiseFulfilledResult<number>).value, 1);
  t.match((results[1] as PromiseRejectedResult).reason, { code: 'SQLITE_CONSTRAINT_PRIMARYKEY' });
  t.match((results[3] as PromiseRejectedResult).reason, { message: 'after a write' });
  const reader = new Database(file, { readonly: true });
  t.teardown(() => reader.close());
  t.same(reader.prepare('SELECT name FROM items ORDER BY name').pluck().all(), ['a', 'b'], 'a failed job leaves nothing behind and undoes nothing else');
  t.equal(store.db.pragma('synchronous', { simple: true }), 2, 'the connection is back to synchronous=FULL');
});

t.test('a batch makes one full-text index segment, not one per job', async (t) => {
  const { store } = openStore(t);
  store.db.exec("CREATE VIRTUAL TABLE words USING fts5(body, content='', contentless_delete=1)");
  const segmentsBefore = store.db.prepare('SELECT count(*) FROM words_data').pluck().get() as number;
  await Promise.all(
    Array.from({ length: 20 }, (_, i) =>
      store.groupCommit(() => store.db.prepare('INSERT INTO words (rowid, body) VALUES (?, ?)').run(i + 1, `word${i} shared`)),
    ),
  );
  const segmentsAfter = store.db.prepare('SELECT count(*) FROM words_data').pluck().get() as number;
  // One batch writes one leaf here. A savepoint per job flushed the index 20 times and
  // left 5 records even after FTS5's incremental merges.
  t.ok(segmentsAfter - segmentsBefore <= 2, `rows added to words_data: ${segmentsAfter - segmentsBefore}`);
  t.equal(store.db.prepare("SELECT count(*) FROM words WHERE words MATCH 'shared'").pluck().get(), 20);
});

t.test('jobs of later turns get their own transactions', async (t) => {
  const { store, insert } = openStore(t);
  await store.groupCommit(insert('x'));
  const second = await Promise.allSettled([store.groupCommit(insert('x')), store.groupCommit(insert('y'))]);
  t.same(
    second.map((result) => result.status),
    ['rejected', 'fulfilled'],
  );
  t.same(store.db.prepare('SELECT name FROM items ORDER BY name').pluck().all(), ['x', 'y']);
});

t.test('jobs that arrive while a batch is syncing wait for it and commit together', async (t) => {
  const { store, insert } = openStore(t);
  let releaseSync = (): void => {};
  const syncs: Promise<void>[] = [];
  // Each committed batch syncs the WAL once: the syncs count the transactions.
  let transactions = 0;
  const heldSync = {
    sync: () =>
      new Promise<void>((resolve) => {
        transactions += 1;
        releaseSync = resolve;
      }).then(() => {
        syncs.push(Promise.resolve());
      }),
    close: () => {},
  };
  const committer = new GroupCommitter(store.db, store.feed, new ConnectionTurns(), heldSync);
  const first = committer.run(insert('a'));
  await new Promise((resolve) => setImmediate(resolve));
  t.equal(transactions, 1, 'the first batch committed and is syncing');
  const second = committer.run(insert('b'));
  await new Promise((resolve) => setImmediate(resolve));
  const third = committer.run(insert('c'));
  await new Promise((resolve) => setImmediate(resolve));
  t.equal(transactions, 1, 'nothing else commits while a batch is in flight');
  releaseSync();
  await first;
  await new Promise((resolve) => setImmediate(resolve));
  t.equal(transactions, 2, 'the waiting jobs committed in one batch');
  releaseSync();
  t.same(await Promise.all([second, third]), [1, 1]);
  t.equal(syncs.length, 2, 'one sync per batch');
});
