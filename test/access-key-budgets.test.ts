import t, { type Test } from 'tap';
import { ManualClock } from '../src/core/clock.js';
import { isAppError } from '../src/core/errors.js';
import type { Principal } from '../src/core/types.js';
import { startApp, type TestApp } from './helpers/app.js';
import { issueAccessKey } from './helpers/keys.js';

/**
 * Budget arithmetic over the send path's recipient rows, driven through the store
 * operations the sending slice exposes (insert, transition, refundOnce), the way its
 * accept transaction and delivery worker use them.
 */
const SEND_KEY = { name: 'sender', kind: 'mail', permissions: ['mail:send'] };

interface Harness {
  app: TestApp;
  principal: Principal;
  limitedKey: string;
  ownerKey: string;
  /** Accepts one submission of `addresses` under the key, as the send path would; returns the row ids. */
  accept(addresses: string[], suppressed?: string[]): Promise<number[]>;
  statusOf(thunk: () => unknown): Promise<string>;
}

let sequence = 0;
const harness = async (t: Test, clock: ManualClock, policy: Record<string, unknown>): Promise<Harness> => {
  const app = await startApp(t, { timeZone: 'America/New_York' }, { clock });
  const { apiKey, email } = await app.register();
  await app.app.services.accounts.addCredits(email, 1000);
  const limited = await issueAccessKey(app, apiKey, { ...SEND_KEY, ...policy });
  const principal = await app.app.services.auth.authenticate(limited.apiKey);
  const { store, services } = app.app;
  const accept = async (addresses: string[], suppressed: string[] = []): Promise<number[]> =>
    await store.transaction(async () => {
      await services.accessKeyPolicy.reserveUnits(principal, addresses.length);
      await store.accounts.reserveCredits(principal.accountId, addresses.length);
      const id = `sub-${(sequence += 1)}`;
      const rows = await store.submissions.insert(
        {
          id,
          accountId: principal.accountId,
          keyId: principal.keyId,
          messageId: `<${id}@x>`,
          contentHash: id,
          fromAddress: email,
          subject: 's',
          via: 'rest',
          createdAt: clock.now().getTime(),
          raw: Buffer.from('x'),
        },
        [
          ...addresses.map((address) => ({ address, domain: 'example.org', kind: 'to' as const, status: 'queued' as const })),
          ...suppressed.map((address) => ({ address, domain: 'example.org', kind: 'to' as const, status: 'suppressed' as const })),
        ],
        0,
      );
      return rows.map((row) => row.id);
    });
  const statusOf = async (thunk: () => unknown): Promise<string> => {
    try {
      await thunk();
      return 'ok';
    } catch (error) {
      return isAppError(error) ? error.code : 'thrown';
    }
  };
  return { app, principal, limitedKey: limited.apiKey, ownerKey: apiKey, accept, statusOf };
};

const usage = async (h: Harness) => {
  const { store } = h.app.app;
  // The trigger-kept total (migration 006) must always equal the count derived from the rows.
  if ((await store.accessKeys.totalUnitsHeld(h.principal.keyId)) !== (await store.submissions.countKeyUnitsSince(h.principal.keyId, 0))) {
    throw new Error('the total units counter drifted from the recipient rows');
  }
  const balance = await h.app.api('GET', '/api/v1/agent/balance', { key: h.limitedKey });
  return [balance.body.accessKey.dailyRecipientsUsed, balance.body.accessKey.totalRecipientsUsed];
};

t.test('accepted and unresolved recipients keep their unit; a definite rejection releases it once', async (t) => {
  const clock = new ManualClock('2026-03-02T15:00:00Z');
  const h = await harness(t, clock, { dailyRecipientLimit: 5, totalRecipientLimit: 8 });
  const { store } = h.app.app;
  const now = () => clock.now().getTime();
  const [delivered, rejected, unresolved] = await h.accept(['a@example.org', 'b@example.org', 'c@example.org'], ['s@example.org']);
  t.same(await usage(h), [3, 3], 'three units reserved; the suppressed recipient takes none');

  await store.transaction(() => store.submissions.transition(delivered, { status: 'delivered', smtpCode: 250 }, now()));
  await store.transaction(() => store.submissions.transition(unresolved, { status: 'unresolved', diagnostic: 'connection lost after DATA' }, now()));
  t.same(await usage(h), [3, 3], 'delivered and unresolved keep theirs');
  await store.transaction(async () => {
    await store.submissions.transition(rejected, { status: 'failed', smtpCode: 550, enhancedCode: '5.1.1' }, now());
    await store.submissions.refundOnce(rejected);
  });
  t.same(await usage(h), [2, 2], 'the rejection released one unit');
  t.equal(await store.submissions.refundOnce(rejected), false, 'released once only');
  await store.transaction(() => store.submissions.transition(rejected, { status: 'failed', diagnostic: 'again' }, now()));
  t.same(await usage(h), [2, 2]);

  t.equal(
    await h.statusOf(async () => await h.accept(['d@example.org', 'e@example.org', 'f@example.org', 'g@example.org'])),
    'rate_limited',
    '2 + 4 > 5 a day',
  );
  t.same(await usage(h), [2, 2], 'a refused send reserves nothing');
  t.equal(await h.statusOf(async () => await h.accept(['d@example.org', 'e@example.org', 'f@example.org'])), 'ok', '2 + 3 = 5');
  t.same(await usage(h), [5, 5]);
  t.equal(await h.statusOf(async () => await h.accept(['h@example.org'])), 'rate_limited', 'the day is spent');
  const owner = (await h.app.api('GET', '/api/v1/agent/access-keys', { key: h.ownerKey })).body.accessKeys[0];
  t.match(owner, { dailyRecipientsUsed: 5, totalRecipientsUsed: 5 }, 'the owner sees the same usage in the list');
});

t.test('the daily budget resets at midnight in the service time zone; the total never does', async (t) => {
  // 23:50 in New York (UTC-5 in March before the change) is 04:50 UTC.
  const clock = new ManualClock('2026-03-03T04:50:00Z');
  const h = await harness(t, clock, { dailyRecipientLimit: 2, totalRecipientLimit: 3 });
  t.equal(await h.statusOf(async () => await h.accept(['a@example.org', 'b@example.org'])), 'ok');
  let refused: unknown;
  try {
    await h.accept(['c@example.org']);
  } catch (error) {
    refused = error;
  }
  t.match(refused, { code: 'rate_limited', details: { retryAfterSeconds: 600 } }, 'Retry-After points at local midnight');
  clock.set('2026-03-03T04:59:59Z');
  t.same(await usage(h), [2, 2], 'still the same local day');
  clock.set('2026-03-03T05:00:00Z');
  t.same(await usage(h), [0, 2], 'a new day at local midnight (05:00 UTC), not at UTC midnight');
  t.equal(await h.statusOf(async () => await h.accept(['c@example.org', 'd@example.org'])), 'forbidden', '2 + 2 > 3 in total');
  t.equal(await h.statusOf(async () => await h.accept(['c@example.org'])), 'ok');
  t.same(await usage(h), [1, 3]);
  clock.set('2026-03-10T12:00:00Z');
  t.same(await usage(h), [0, 3], 'totals never reset');
  t.equal(await h.statusOf(async () => await h.accept(['e@example.org'])), 'forbidden', 'the total budget is spent for good');
});

t.test('address lists match exactly; full keys are not restricted', async (t) => {
  const clock = new ManualClock('2026-03-02T15:00:00Z');
  const h = await harness(t, clock, {
    dailyRecipientLimit: 20,
    totalRecipientLimit: 20,
    allowedSenders: ['Me@agents.localhost'],
    allowedRecipients: ['one@example.org', 'two@example.org'],
  });
  const policy = h.app.app.services.accessKeyPolicy;
  const check = async (from: string, replyTo: string[], recipients: string[]) =>
    await h.statusOf(() => policy.checkAddresses(h.principal, { from, replyTo, recipients }));
  t.equal(await check('me@agents.localhost', [], ['one@example.org', 'TWO@example.org']), 'ok', 'case of the address does not matter');
  t.equal(await check('other@agents.localhost', [], ['one@example.org']), 'forbidden', 'from outside allowedSenders');
  t.equal(await check('me@agents.localhost', ['reply@example.org'], ['one@example.org']), 'forbidden', 'replyTo outside allowedSenders');
  t.equal(await check('me@agents.localhost', [], ['one@example.org', 'three@example.org']), 'forbidden', 'a recipient outside the list');
  t.equal(await check('me@agents.localhost', [], ['one@example.org.evil.test']), 'forbidden', 'no suffix or domain matching');
  const full: Principal = { ...h.principal, kind: 'full', permissions: ['mail:read', 'mail:send', 'domains:read', 'domains:write'] };
  t.equal(await h.statusOf(() => policy.checkAddresses(full, { from: 'x@y.z', replyTo: [], recipients: ['any@where.org'] })), 'ok');
  t.equal(await h.statusOf(() => policy.reserveUnits(full, 1000)), 'ok');

  const reader = await issueAccessKey(h.app, (await h.app.register()).apiKey, { name: 'r', kind: 'mail', permissions: ['mail:read'] });
  const readerPrincipal = await h.app.app.services.auth.authenticate(reader.apiKey);
  t.equal(await h.statusOf(() => policy.checkAddresses(readerPrincipal, { from: 'x@y.z', replyTo: [], recipients: [] })), 'forbidden', 'mail:read cannot send');
});

t.test('the total survives the deletion of old recipient rows (retention never gives units back)', async (t) => {
  const clock = new ManualClock('2026-03-02T15:00:00Z');
  const h = await harness(t, clock, { dailyRecipientLimit: 5, totalRecipientLimit: 5 });
  await h.accept(['a@example.org', 'b@example.org']);
  const { db } = h.app.app.store;
  db.prepare('DELETE FROM recipient_events').run();
  db.prepare('DELETE FROM submission_recipients').run();
  clock.set('2026-03-05T15:00:00Z');
  const balance = await h.app.api('GET', '/api/v1/agent/balance', { key: h.limitedKey });
  t.match(balance.body.accessKey, { dailyRecipientsUsed: 0, totalRecipientsUsed: 2 });
  t.equal(await h.statusOf(async () => await h.accept(['c@example.org', 'd@example.org', 'e@example.org', 'f@example.org'])), 'forbidden', '2 + 4 > 5');
});

t.test('balance shows a limited key its policy; a full key sees none', async (t) => {
  const clock = new ManualClock('2026-03-02T15:00:00Z');
  const h = await harness(t, clock, {
    dailyRecipientLimit: 20,
    totalRecipientLimit: 50,
    expiresAt: '2026-06-01T00:00:00Z',
    allowedRecipients: ['one@example.org'],
  });
  const balance = await h.app.api('GET', '/api/v1/agent/balance', { key: h.limitedKey });
  t.match(balance.body, {
    credits: 1000,
    accessKey: {
      name: 'sender',
      permissions: ['mail:send'],
      expiresAt: '2026-06-01T00:00:00.000Z',
      allowedSenders: null,
      allowedRecipients: ['one@example.org'],
      dailyRecipientLimit: 20,
      dailyRecipientsUsed: 0,
      totalRecipientLimit: 50,
      totalRecipientsUsed: 0,
    },
  });
  t.equal(balance.body.accessKey.id, h.principal.keyId);
  const full = await h.app.api('GET', '/api/v1/agent/balance', { key: h.ownerKey });
  t.notOk('accessKey' in full.body, 'a full key sees no accessKey');
});
