import { join } from 'node:path';
import t, { type Test } from 'tap';
import { Store } from '../src/store/index.js';
import { ConnectionTurns } from '../src/store/unit.js';

/**
 * src/store/unit.ts and Store.transaction: units of work on the one SQLite connection. Code
 * outside a unit waits until it ends, so it neither reads what the unit has not committed nor
 * writes into it; a unit inside a unit is a savepoint; a unit that awaits something other than
 * the store fails in strict mode.
 */

const openStore = (t: Test, file = join(t.testdir({}), 'agentpost.db')) => {
  const store = Store.open(file);
  t.teardown(() => store.close());
  return store;
};

const credits = async (store: Store) => (await store.accounts.byId('acc1'))?.credits;

const withAccount = async (store: Store) => {
  await store.accounts.insert({
    id: 'acc1',
    agentId: 'one',
    name: null,
    email: 'one@agents.localhost',
    credits: 10,
    status: 'active',
    sendingState: 'probation',
    createdAt: 0,
    kind: 'agent',
    ownerId: null,
  });
};

t.test('a read outside an open unit waits for its end: it never sees what the unit has not committed', async (t) => {
  const store = openStore(t);
  await withAccount(store);
  // The unit holds the connection from here: its first write is done, its commit is not.
  const unit = store.transaction(async () => {
    await store.accounts.addCredits('acc1', 5);
    await Promise.resolve(); // other code runs between two statements of a unit
    throw new Error('the unit fails');
  });
  const outside = credits(store);
  await t.rejects(unit, /the unit fails/);
  t.equal(await outside, 10, 'the read waited for the rollback instead of reading the write in progress');
  const committed = store.transaction(() => store.accounts.addCredits('acc1', 5));
  t.equal(await credits(store), 15, 'and a read after a commit sees it');
  await committed;
});

t.test('a write outside a unit that rolls back is not rolled back with it', async (t) => {
  const store = openStore(t);
  await withAccount(store);
  const unit = store.transaction(async () => {
    await store.accounts.addCredits('acc1', 100);
    await Promise.resolve();
    throw new Error('the unit fails');
  });
  const outside = store.accounts.addCredits('acc1', 1);
  await t.rejects(unit, /the unit fails/);
  t.equal(await outside, 11, 'the outside write ran after the rollback');
  t.equal(await credits(store), 11, "the unit's write is gone, the outside write is kept");
});

t.test('a unit inside a unit is a savepoint: its failure undoes only its own writes', async (t) => {
  const store = openStore(t);
  await withAccount(store);
  await store.transaction(async () => {
    await store.accounts.addCredits('acc1', 1);
    await t.rejects(
      store.transaction(async () => {
        await store.accounts.addCredits('acc1', 50);
        throw new Error('inner');
      }),
      /inner/,
    );
    await store.accounts.addCredits('acc1', 2);
  });
  t.equal(await credits(store), 13);
});

t.test('in strict mode a unit that stays open across a turn of the event loop fails and rolls back', async (t) => {
  const store = openStore(t);
  await withAccount(store);
  t.equal(process.env.AGENTPOST_STRICT_UNITS, '1', 'the tests run in strict mode (scripts/test.mjs)');
  await t.rejects(
    store.transaction(async () => {
      await store.accounts.addCredits('acc1', 7);
      await new Promise((resolve) => setTimeout(resolve, 5));
    }),
    /stayed open across a turn of the event loop/,
  );
  t.equal(await credits(store), 10, 'rolled back');
  await store.transaction(() => store.accounts.addCredits('acc1', 1));
  t.equal(await credits(store), 11, 'the connection is free for the next unit');
});

t.test('outside strict mode such a unit commits and is reported', async (t) => {
  const reported: Error[] = [];
  const turns = new ConnectionTurns(false, (error) => reported.push(error));
  await turns.open(async () => {
    await new Promise((resolve) => setTimeout(resolve, 5));
    turns.checkTurn();
  });
  t.equal(reported.length, 1);
  t.match(reported[0].message, /stayed open across a turn/);
});

t.test('two stores on one file in one process take turns instead of waiting on the lock', async (t) => {
  const file = join(t.testdir({}), 'agentpost.db');
  const [first, second] = [openStore(t, file), openStore(t, file)];
  await withAccount(first);
  // Without shared turns the second BEGIN IMMEDIATE waits on the thread the first unit needs: "database is locked".
  await Promise.all([
    first.transaction(async () => {
      await first.accounts.addCredits('acc1', 1);
      await first.accounts.addCredits('acc1', 1);
    }),
    second.transaction(async () => {
      await second.accounts.addCredits('acc1', 1);
    }),
  ]);
  t.equal(await credits(second), 13);
});
