import { heardChanges } from './helpers/changes.js';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import { OUTBOUND_RECIPIENT_UPDATED } from '../src/core/events.js';
import { Store } from '../src/store/index.js';

const open = async (t: Test): Promise<Store> => {
  const store = Store.open(join(t.testdir({}), 'agentpost.db'));
  t.teardown(() => store.close());
  await store.accounts.insert({
    id: 'acc1',
    agentId: 'a',
    name: null,
    email: 'a@agents.localhost',
    credits: 5,
    status: 'active',
    sendingState: 'probation',
    createdAt: 0,
    kind: 'agent',
    ownerId: null,
  });
  return store;
};

const submission = (id: string, contentHash = 'h1') => ({
  id,
  accountId: 'acc1',
  keyId: 'key1',
  messageId: `<${id}@agents.localhost>`,
  contentHash,
  fromAddress: 'a@agents.localhost',
  subject: 's',
  via: 'rest' as const,
  createdAt: 1000,
  raw: Buffer.from('raw'),
});

t.test('accepting reserves credits and records recipients, events and changes', async (t) => {
  const store = await open(t);
  const outbox = heardChanges(store, OUTBOUND_RECIPIENT_UPDATED);
  const rows = await store.transaction(async () => {
    t.equal(await store.accounts.reserveCredits('acc1', 2), true);
    return await store.submissions.insert(
      submission('s1'),
      [
        { address: 'x@example.com', domain: 'example.com', kind: 'to', status: 'queued' },
        { address: 'y@example.com', domain: 'example.com', kind: 'cc', status: 'queued' },
        { address: 'z@example.com', domain: 'example.com', kind: 'bcc', status: 'suppressed' },
      ],
      0,
    );
  });
  t.equal((await store.accounts.byId('acc1'))?.credits, 3);
  t.same(
    rows.map((row) => [row.status, row.creditReserved, row.nextAttemptAt]),
    [
      ['queued', true, 1000],
      ['queued', true, 1000],
      ['suppressed', false, null],
    ],
  );
  t.equal(await store.accounts.reserveCredits('acc1', 4), false, 'not enough: nothing taken');
  t.equal((await store.accounts.byId('acc1'))?.credits, 3);
  await t.rejects(() => store.accounts.addCredits('acc1', -4), /CHECK/, 'credits never go negative');
  t.same(await store.submissions.due(999, 10), []);
  t.same(
    (await store.submissions.due(1000, 10)).map((row) => row.address),
    ['x@example.com', 'y@example.com'],
  );
  t.equal(await store.submissions.countAccountRecipientsSince('acc1', 0), 2);
  t.equal(await store.submissions.countKeyUnitsSince('key1', 0), 2);
  t.equal(await store.submissions.countKeyUnitsSince('key1', 1001), 0);
  t.same(outbox, [
    { accountId: 'acc1', submissionId: 's1', recipient: 'x@example.com', status: 'queued', at: 1000 },
    { accountId: 'acc1', submissionId: 's1', recipient: 'y@example.com', status: 'queued', at: 1000 },
    { accountId: 'acc1', submissionId: 's1', recipient: 'z@example.com', status: 'suppressed', at: 1000 },
  ]);
  t.same(await store.submissions.rawOf('s1'), Buffer.from('raw'));
});

t.test('a refund happens exactly once and transitions can be guarded', async (t) => {
  const store = await open(t);
  const [x, z] = await store.transaction(async () => {
    await store.accounts.reserveCredits('acc1', 1);
    return await store.submissions.insert(
      submission('s1'),
      [
        { address: 'x@example.com', domain: 'example.com', kind: 'to', status: 'queued' },
        { address: 'z@example.com', domain: 'example.com', kind: 'to', status: 'suppressed' },
      ],
      0,
    );
  });
  const change = { status: 'failed' as const, smtpCode: 550, enhancedCode: '5.1.1', diagnostic: 'no such user', countAttempt: true, nextAttemptAt: null };
  t.equal(await store.transaction(() => store.submissions.transition(x.id, change, 2000, ['queued', 'deferred'])), true);
  t.equal(await store.transaction(() => store.submissions.transition(x.id, change, 2001, ['queued', 'deferred'])), false, 'already settled');
  t.equal(await store.submissions.refundOnce(x.id), true);
  t.equal(await store.submissions.refundOnce(x.id), false);
  t.equal(await store.submissions.refundOnce(z.id), false, 'a suppressed recipient reserved nothing');
  t.equal((await store.accounts.byId('acc1'))?.credits, 5);
  t.equal(await store.submissions.countKeyUnitsSince('key1', 0), 0, 'a refunded unit is released');
  t.match(await store.submissions.recipientById(x.id), {
    status: 'failed',
    refunded: true,
    attempts: 1,
    nextAttemptAt: null,
    lastSmtpCode: 550,
    lastEnhancedCode: '5.1.1',
  });
  const events = await store.submissions.eventsOf('s1');
  t.same(
    events.map((event) => [event.address, event.status, event.smtpCode]),
    [
      ['x@example.com', 'queued', null],
      ['z@example.com', 'suppressed', null],
      ['x@example.com', 'failed', 550],
    ],
  );
  t.equal((await store.submissions.eventsOf('s1', 2))[0].status, 'suppressed', 'the cap keeps the latest');
});

t.test('limits count charged recipients and rate events, and read one time only at the position asked', async (t) => {
  const store = await open(t);
  await store.transaction(async () => {
    await store.submissions.insert(
      { ...submission('s1'), createdAt: 1000 },
      [
        { address: 'a@example.com', domain: 'example.com', kind: 'to', status: 'queued' },
        { address: 'b@example.com', domain: 'example.com', kind: 'to', status: 'suppressed' },
      ],
      0,
    );
    await store.submissions.insert(
      { ...submission('s2'), createdAt: 2000 },
      [
        { address: 'c@example.com', domain: 'example.com', kind: 'to', status: 'queued' },
        { address: 'd@example.com', domain: 'example.com', kind: 'to', status: 'queued' },
      ],
      0,
    );
    for (const at of [10, 20, 30]) await store.rateLimits.record('send', 'acc1', at);
    await store.rateLimits.record('send', 'other', 15);
  });
  t.equal(await store.submissions.countAccountRecipientsSince('acc1', 1000), 3, 'suppressed recipients are not charged');
  t.equal(await store.submissions.countAccountRecipientsSince('acc1', 1001), 2);
  // The limits' counts (recipient-counts.ts) answer the same as the rows.
  t.equal(await store.recipientCounts.today('acc1', 0), 3, "the day's count");
  t.equal(await store.recipientCounts.today('other', 0), 0, 'an account with none');
  t.equal(await store.recipientCounts.since('acc1', 1000), 3, 'whole seconds');
  t.equal(await store.recipientCounts.since('acc1', 1001), 2, 'the part of a second at the start, from the rows');
  t.equal(await store.recipientCounts.since('acc1', 1500), 2);
  t.equal(await store.recipientCounts.since('acc1', 2001), 0);
  t.equal(await store.recipientCounts.sinceAtMost('acc1', 1001), 3, 'at most: the first second counted whole');
  t.equal(await store.recipientCounts.sinceAtMost('acc1', 2001), 2);
  t.same(await Promise.all(await Promise.all([0, 1, 2, 3].map((index) => store.submissions.recipientTimeAt('acc1', 0, index)))), [1000, 2000, 2000, null]);
  t.equal(await store.submissions.recipientTimeAt('acc1', 1001, 0), 2000);
  t.equal(await store.rateLimits.countSince('send', 'acc1', 15), 2);
  t.same(await Promise.all(await Promise.all([0, 1, 2].map((index) => store.rateLimits.timeAt('send', 'acc1', 15, index)))), [20, 30, null]);
  // A new day's count starts from the rows already there (a count kept since an upgrade); older days go.
  await store.transaction(() =>
    store.submissions.insert(
      { ...submission('s3'), createdAt: 2500 },
      [{ address: 'e@example.com', domain: 'example.com', kind: 'to', status: 'queued' }],
      1500,
    ),
  );
  t.equal(await store.recipientCounts.today('acc1', 1500), 3, 's2 and s3, counted from the rows when the day began');
  t.equal(store.db.prepare('SELECT count(*) FROM recipient_day_counts').pluck().get(), 1, 'the earlier day is gone');
});

t.test('unresolved identical messages, idempotency records and suppressions', async (t) => {
  const store = await open(t);
  const [x] = await store.transaction(() =>
    store.submissions.insert(submission('s1', 'same'), [{ address: 'x@example.com', domain: 'example.com', kind: 'to', status: 'queued' }], 0),
  );
  t.equal(await store.submissions.hasUnresolvedIdentical('acc1', 'same'), false);
  await store.transaction(() => store.submissions.transition(x.id, { status: 'unresolved', diagnostic: 'connection lost after DATA' }, 3000));
  t.equal(await store.submissions.hasUnresolvedIdentical('acc1', 'same'), true);
  t.equal(await store.submissions.hasUnresolvedIdentical('acc1', 'other'), false);

  const record = {
    accountId: 'acc1',
    scope: '',
    idempotencyKey: 'k',
    keyId: 'key1',
    contentHash: 'same',
    submissionId: 's1',
    responseJson: '{}',
    createdAt: 10,
  };
  await store.idempotency.insert(record);
  await t.rejects(() => store.idempotency.insert(record), /UNIQUE/);
  t.same(await store.idempotency.get('acc1', '', 'k'), record);
  t.equal(await store.idempotency.get('acc1', 'sandbox:key2', 'k'), null, "another scope's record is not this one's");
  await store.idempotency.insert({ ...record, scope: 'sandbox:key2', keyId: 'key2' });
  t.equal(await store.idempotency.sweepBefore(10), 0);
  t.equal(await store.idempotency.sweepBefore(11), 2);

  const suppression = { id: 'sup1', accountId: 'acc1', address: 'x@example.com', reason: 'bounce' as const, canRelease: true, createdAt: 5 };
  t.equal(await store.suppressions.add(suppression), true);
  t.equal(await store.suppressions.add({ ...suppression, id: 'sup2' }), false, 'one active per address');
  t.same([...(await store.suppressions.activeAmong('acc1', ['x@example.com', 'y@example.com']))], ['x@example.com']);
  t.equal(await store.suppressions.release('sup1', 6), true);
  t.equal(await store.suppressions.release('sup1', 7), false);
  t.same(await store.suppressions.listActive('acc1', 100), []);
  t.equal(await store.suppressions.add({ ...suppression, id: 'sup3' }), true, 'suppressible again after release');
});
