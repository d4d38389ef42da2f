import { join } from 'node:path';
import t, { type Test } from 'tap';
import type { Committed } from '../src/store/index.js';
import { Store } from '../src/store/index.js';
import { startApp } from './helpers/app.js';
import { imapLogin } from './helpers/imap.js';
import { smtpSend } from './helpers/smtp.js';

/** src/store/commit-feed.ts: the store's one after-commit hook, and IMAP IDLE pushed from it. */

const openStore = (t: Test) => {
  const store = Store.open(join(t.testdir({}), 'agentpost.db'));
  t.teardown(() => store.close());
  const heard: Committed[] = [];
  store.feed.subscribe(['a', 'b'], (entries) => heard.push(...entries));
  return { store, heard };
};

t.test('a transaction publishes its changes once, after the commit', async (t) => {
  const { store, heard } = openStore(t);
  await store.transaction(async () => {
    await store.changes.record('a', { n: 1 });
    await store.transaction(() => store.changes.record('b', { n: 2 })); // a savepoint
    t.same(heard, [], 'nothing is published before the outermost commit');
  });
  t.match(heard, [
    { topic: 'a', payload: { n: 1 } },
    { topic: 'b', payload: { n: 2 } },
  ]);
  t.ok(
    heard.every((entry) => entry.change === true),
    'each entry is marked a change, not a notice',
  );
});

t.test('a beforeCommit hook writes in the transaction of the changes it sees, once per commit; its failure rolls it back', async (t) => {
  const { store } = openStore(t);
  const seen: number[][] = [];
  let failing = false;
  store.db.exec('CREATE TABLE hooked (calls INTEGER)');
  const hooked = () => store.db.prepare('SELECT max(calls) FROM hooked').pluck().get();
  store.feed.beforeCommit(['a'], (entries) => {
    if (failing) throw new Error('the hook fails');
    seen.push(entries.map((entry) => (entry.payload as { n: number }).n));
    store.db.prepare('INSERT INTO hooked VALUES (?)').run(seen.length);
  });
  await store.transaction(async () => {
    await store.changes.record('a', { n: 1 });
    await store.transaction(() => store.changes.record('a', { n: 2 }));
    await store.changes.record('b', { n: 3 });
    store.notice('a', { n: 4 });
  });
  t.same(seen, [[1, 2]], 'once, at the outermost commit, with the changes of its topics and no notice');
  t.equal(hooked(), 1, 'what the hook wrote committed');
  await Promise.all([store.groupCommit(() => store.changes.record('a', { n: 5 })), store.groupCommit(() => store.changes.record('a', { n: 6 }))]);
  t.same(seen[1], [5, 6], 'a group-commit batch is one transaction: one call for its jobs');
  await store.transaction(() => store.db.prepare('INSERT INTO hooked VALUES (0)').run());
  t.equal(seen.length, 2, 'a transaction without such changes does not call it');
  failing = true;
  await t.rejects(async () => await store.transaction(() => store.changes.record('a', { n: 7 })), /the hook fails/);
  failing = false;
  t.equal(hooked(), 2, 'the failed transaction left nothing');
});

t.test('a rollback publishes nothing, and a rolled-back savepoint only loses its own rows', async (t) => {
  const { store, heard } = openStore(t);
  await t.rejects(
    async () =>
      await store.transaction(async () => {
        await store.changes.record('a', { n: 1 });
        throw new Error('rolled back');
      }),
  );
  await store.transaction(async () => {
    await store.changes.record('a', { n: 2 });
    await t.rejects(
      async () =>
        await store.transaction(async () => {
          await store.changes.record('b', { n: 3 });
          throw new Error('savepoint rolled back');
        }),
    );
  });
  t.match(heard, [{ topic: 'a', payload: { n: 2 } }]);
  t.equal(heard.length, 1);
});

t.test('a group-commit batch publishes only the jobs that committed, once durable', async (t) => {
  const { store, heard } = openStore(t);
  const results = await Promise.allSettled([
    store.groupCommit(() => store.changes.record('a', { n: 1 })),
    store.groupCommit(async () => {
      await store.changes.record('a', { n: 2 });
      throw new Error('this job fails');
    }),
    store.groupCommit(() => store.changes.record('b', { n: 3 })),
  ]);
  t.same(
    results.map((result) => result.status),
    ['fulfilled', 'rejected', 'fulfilled'],
  );
  t.same(
    heard.map((entry) => (entry.payload as { n: number }).n),
    [1, 3],
    'the failed job and the rolled-back batch attempt are not heard of',
  );
});

t.test('a change outside a transaction is refused (docs/design.md rule 6)', async (t) => {
  const { store } = openStore(t);
  await t.rejects(() => store.changes.record('a', {}), /outside a transaction/);
});

t.test('a notice is published with its transaction, or at once outside one; a listener that throws harms no other', async (t) => {
  const { store, heard } = openStore(t);
  store.feed.subscribe('a', () => {
    throw new Error('a broken listener');
  });
  store.notice('a', { n: 1 });
  await store.transaction(() => store.notice('b', { n: 2 }));
  t.same(
    heard.map((entry) => entry.payload),
    [{ n: 1 }, { n: 2 }],
  );
});

t.test('IMAP IDLE hears of new mail as soon as it is committed: no poll', async (t) => {
  const app = await startApp(t);
  const agent = await app.register('idler');
  const client = await imapLogin(t, app.imapPort, agent.email, agent.apiKey);
  await client.mailboxOpen('INBOX');
  const exists = new Promise<number>((resolve) => client.on('exists', (data: { count: number }) => resolve(data.count)));
  const idling = client.idle();
  await new Promise((resolve) => setTimeout(resolve, 50));
  await smtpSend(app.smtpPort, { from: 'a@example.com', to: agent.email, subject: 'pushed', text: 'now' });
  t.equal(await exists, 1, 'the EXISTS arrived while idling');
  await client.noop(); // ends the IDLE
  await idling;
});
