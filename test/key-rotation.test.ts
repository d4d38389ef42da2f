import t from 'tap';
import { ManualClock } from '../src/core/clock.js';
import { keyExpiryRunOnce } from '../src/app/calendar-jobs.js';
import { startApp } from './helpers/app.js';

const MINUTE = 60_000;

t.test('prepare, both keys work, activate with the replacement revokes the old key', async (t) => {
  const { api, register } = await startApp(t);
  const { apiKey: original } = await register();
  const before = await api('GET', '/api/v1/agent/keys', { key: original });
  t.equal(before.status, 200);
  t.equal(before.body.pending, null);
  const originalId = before.body.active.id;

  const prepared = await api('POST', '/api/v1/agent/keys', { key: original, body: { action: 'prepare' } });
  t.equal(prepared.status, 200);
  t.match(prepared.body, { action: 'prepare', status: 'pending', apiKey: /^svc_[0-9a-f]{64}$/, active: { id: originalId } });
  const replacement: string = prepared.body.apiKey;
  t.not(replacement, original);

  const state = await api('GET', '/api/v1/agent/keys', { key: replacement });
  t.equal(state.status, 200, 'the replacement works before activation');
  t.notOk('apiKey' in state.body, 'the state carries no secret');
  t.equal(state.body.pending.id, prepared.body.pending.id);
  t.equal(Date.parse(state.body.pending.expiresAt) - Date.parse(state.body.pending.createdAt), 30 * MINUTE);
  t.equal((await api('GET', '/api/v1/agent/balance', { key: original })).status, 200, 'the original still works');

  const again = await api('POST', '/api/v1/agent/keys', { key: original, body: { action: 'prepare' } });
  t.equal(again.status, 409, 'one replacement at a time');
  const fromReplacement = await api('POST', '/api/v1/agent/keys', { key: replacement, body: { action: 'prepare' } });
  t.equal(fromReplacement.status, 409);

  const wrongKey = await api('POST', '/api/v1/agent/keys', { key: original, body: { action: 'activate' } });
  t.equal(wrongKey.status, 403, 'activate needs the replacement key');

  const activated = await api('POST', '/api/v1/agent/keys', { key: replacement, body: { action: 'activate' } });
  t.equal(activated.status, 200);
  t.match(activated.body, { action: 'activate', status: 'active', active: { id: prepared.body.pending.id }, pending: null });
  t.notOk('apiKey' in activated.body);

  t.equal((await api('GET', '/api/v1/agent/balance', { key: original })).status, 401, 'the old key is revoked');
  t.equal((await api('GET', '/api/v1/agent/balance', { key: replacement })).status, 200);
  const noPending = await api('POST', '/api/v1/agent/keys', { key: replacement, body: { action: 'activate' } });
  t.equal(noPending.status, 409, 'nothing left to activate');
});

t.test('cancel with the original drops the replacement; not with the replacement', async (t) => {
  const { api, register } = await startApp(t);
  const { apiKey: original } = await register();
  t.equal((await api('POST', '/api/v1/agent/keys', { key: original, body: { action: 'cancel' } })).status, 409, 'nothing to cancel');
  const prepared = await api('POST', '/api/v1/agent/keys', { key: original, body: { action: 'prepare' } });
  const replacement: string = prepared.body.apiKey;
  const byReplacement = await api('POST', '/api/v1/agent/keys', { key: replacement, body: { action: 'cancel' } });
  t.equal(byReplacement.status, 403);
  const cancelled = await api('POST', '/api/v1/agent/keys', { key: original, body: { action: 'cancel' } });
  t.equal(cancelled.status, 200);
  t.match(cancelled.body, { action: 'cancel', status: 'cancelled', pending: null });
  t.equal((await api('GET', '/api/v1/agent/balance', { key: replacement })).status, 401, 'the dropped replacement no longer works');
  t.equal((await api('GET', '/api/v1/agent/balance', { key: original })).status, 200);
  const next = await api('POST', '/api/v1/agent/keys', { key: original, body: { action: 'prepare' } });
  t.equal(next.status, 200, 'a new replacement may be prepared after cancel');
});

t.test('a replacement not activated within 30 minutes expires; the original stays the only key', async (t) => {
  const clock = new ManualClock('2026-03-01T10:00:00Z');
  const { api, register, app } = await startApp(t, {}, { clock });
  const { apiKey: original } = await register();
  const prepared = await api('POST', '/api/v1/agent/keys', { key: original, body: { action: 'prepare' } });
  const replacement: string = prepared.body.apiKey;

  clock.advance(30 * MINUTE - 1);
  t.equal((await api('GET', '/api/v1/agent/balance', { key: replacement })).status, 200, 'still inside the window');
  t.same(await keyExpiryRunOnce(app.services), { replacementsExpired: 0 });
  clock.advance(1);
  t.equal((await api('GET', '/api/v1/agent/balance', { key: replacement })).status, 401, 'refused by time before any sweep');
  const activate = await api('POST', '/api/v1/agent/keys', { key: replacement, body: { action: 'activate' } });
  t.equal(activate.status, 401);
  t.same(await keyExpiryRunOnce(app.services), { replacementsExpired: 1 }, 'the sweep marks it expired');
  t.same(await keyExpiryRunOnce(app.services), { replacementsExpired: 0 });
  const row = app.store.db.prepare('SELECT status FROM api_keys WHERE id = ?').get(prepared.body.pending.id) as { status: string };
  t.equal(row.status, 'expired');

  const state = await api('GET', '/api/v1/agent/keys', { key: original });
  t.same(state.body, { active: prepared.body.active, pending: null });
  const fresh = await api('POST', '/api/v1/agent/keys', { key: original, body: { action: 'prepare' } });
  t.equal(fresh.status, 200, 'a new replacement can be prepared');
});

t.test('an expired replacement is cleared on use even without the sweep', async (t) => {
  const clock = new ManualClock('2026-03-01T10:00:00Z');
  const { api, register } = await startApp(t, {}, { clock });
  const { apiKey: original } = await register();
  t.equal((await api('POST', '/api/v1/agent/keys', { key: original, body: { action: 'prepare' } })).status, 200);
  clock.advance(31 * MINUTE);
  t.equal((await api('GET', '/api/v1/agent/keys', { key: original })).body.pending, null);
  t.equal((await api('POST', '/api/v1/agent/keys', { key: original, body: { action: 'prepare' } })).status, 200);
});

t.test('12 mutations per account per 15 minutes, then 429 with Retry-After', async (t) => {
  const clock = new ManualClock('2026-03-01T10:00:00Z');
  const { api, register } = await startApp(t, {}, { clock });
  const { apiKey } = await register();
  const other = await register();
  for (let i = 0; i < 6; i += 1) {
    t.equal((await api('POST', '/api/v1/agent/keys', { key: apiKey, body: { action: 'prepare' } })).status, 200);
    t.equal((await api('POST', '/api/v1/agent/keys', { key: apiKey, body: { action: 'cancel' } })).status, 200);
    clock.advance(MINUTE);
  }
  const limited = await api('POST', '/api/v1/agent/keys', { key: apiKey, body: { action: 'prepare' } });
  t.equal(limited.status, 429);
  t.equal(limited.headers.get('retry-after'), String(15 * 60 - 6 * 60), 'until the oldest counted action leaves the window');
  t.equal((await api('GET', '/api/v1/agent/keys', { key: apiKey })).status, 200, 'reading the state is not a mutation');
  t.equal((await api('POST', '/api/v1/agent/keys', { key: other.apiKey, body: { action: 'prepare' } })).status, 200, 'per account');
  clock.advance(9 * MINUTE + 1000);
  t.equal((await api('POST', '/api/v1/agent/keys', { key: apiKey, body: { action: 'prepare' } })).status, 200);
});

t.test('the action is validated', async (t) => {
  const { api, register } = await startApp(t);
  const { apiKey } = await register();
  for (const body of [{}, { action: 'rotate' }, { action: 'prepare', extra: true }]) {
    t.equal((await api('POST', '/api/v1/agent/keys', { key: apiKey, body })).status, 400, JSON.stringify(body));
  }
});

t.test('rotating the account key does not revoke limited keys', async (t) => {
  const { api, register } = await startApp(t);
  const { apiKey: original } = await register();
  const limited = await api('POST', '/api/v1/agent/access-keys', { key: original, body: { name: 'reader', kind: 'mail', permissions: ['mail:read'] } });
  t.equal(limited.status, 201);
  const replacement = (await api('POST', '/api/v1/agent/keys', { key: original, body: { action: 'prepare' } })).body.apiKey;
  t.equal((await api('POST', '/api/v1/agent/keys', { key: replacement, body: { action: 'activate' } })).status, 200);
  t.equal((await api('GET', '/api/v1/agent/inbox', { key: limited.body.apiKey })).status, 200);
  const list = await api('GET', '/api/v1/agent/access-keys', { key: replacement });
  t.equal(list.body.accessKeys[0].status, 'active');
});
