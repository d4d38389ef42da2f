import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { runCli } from '../bin/cli.js';
import { ManualClock } from '../src/core/clock.js';
import { startApp } from './helpers/app.js';
import { enableTwoFactor, issueAccessKey, totpFromUrl } from './helpers/keys.js';

const STEP = 30_000;

t.test('enroll, confirm with a generated code, disable with a fresh one', async (t) => {
  const clock = new ManualClock('2026-03-01T10:00:00Z');
  const app = await startApp(t, {}, { clock });
  const { api } = app;
  const { apiKey, email } = await app.register();
  const now = () => clock.now().getTime();

  t.equal((await api('POST', '/api/v1/agent/2fa', { key: apiKey, body: { action: 'confirm', factorCode: '123456' } })).status, 409, 'nothing to confirm');
  t.equal((await api('POST', '/api/v1/agent/2fa', { key: apiKey, body: { action: 'disable', factorCode: '123456' } })).status, 409, 'not on');

  const enrolled = await api('POST', '/api/v1/agent/2fa', { key: apiKey, body: { action: 'enroll' } });
  t.equal(enrolled.status, 200);
  t.match(enrolled.body, { action: 'enroll', status: 'pending', otpauthUrl: /^otpauth:\/\/totp\/agentpost:/ });
  t.match(decodeURIComponent(enrolled.body.otpauthUrl), email);
  const totp = totpFromUrl(enrolled.body.otpauthUrl);
  const seed = new URL(enrolled.body.otpauthUrl).searchParams.get('secret') as string;
  const stored = JSON.stringify(app.app.store.db.prepare('SELECT * FROM two_factor').all());
  t.notMatch(stored, seed, 'the seed is not stored in the clear');
  t.match(readFileSync(join(app.app.config.dataDir, 'secret.key'), 'utf8'), /^[0-9a-f]{64}\n$/);

  const wrong = await api('POST', '/api/v1/agent/2fa', {
    key: apiKey,
    body: { action: 'confirm', factorCode: '000000' === totp.generate({ timestamp: now() }) ? '111111' : '000000' },
  });
  t.equal(wrong.status, 403);
  const missing = await api('POST', '/api/v1/agent/2fa', { key: apiKey, body: { action: 'confirm' } });
  t.equal(missing.status, 403);
  const code = totp.generate({ timestamp: now() });
  const confirmed = await api('POST', '/api/v1/agent/2fa', { key: apiKey, body: { action: 'confirm', factorCode: code } });
  t.same(confirmed.body, { action: 'confirm', status: 'enabled' });
  t.equal((await api('POST', '/api/v1/agent/2fa', { key: apiKey, body: { action: 'enroll' } })).status, 409, 'disable first to re-enroll');

  const replay = await api('POST', '/api/v1/agent/2fa', { key: apiKey, body: { action: 'disable', factorCode: code } });
  t.equal(replay.status, 403, 'a code is not accepted twice within its window');
  clock.advance(STEP);
  const disabled = await api('POST', '/api/v1/agent/2fa', { key: apiKey, body: { action: 'disable', factorCode: totp.generate({ timestamp: now() }) } });
  t.same(disabled.body, { action: 'disable', status: 'off' });
  const accountId = (await app.app.services.accounts.byEmail(email)).id;
  t.equal(await app.app.store.twoFactor.byAccount(accountId), null, 'the seed is gone');
});

t.test('codes one step either side are accepted; older ones and earlier steps are not', async (t) => {
  const clock = new ManualClock('2026-03-01T10:00:00Z');
  const app = await startApp(t, {}, { clock });
  const { apiKey } = await app.register();
  const totp = totpFromUrl((await app.api('POST', '/api/v1/agent/2fa', { key: apiKey, body: { action: 'enroll' } })).body.otpauthUrl);
  const at = clock.now().getTime();
  const tooOld = totp.generate({ timestamp: at - 2 * STEP });
  t.equal((await app.api('POST', '/api/v1/agent/2fa', { key: apiKey, body: { action: 'confirm', factorCode: tooOld } })).status, 403);
  const next = totp.generate({ timestamp: at + STEP });
  t.equal((await app.api('POST', '/api/v1/agent/2fa', { key: apiKey, body: { action: 'confirm', factorCode: next } })).status, 200, 'clock drift of one step');
  // The step after "now" was used, so the current step's code is an earlier one: refused.
  const current = totp.generate({ timestamp: at });
  t.equal((await app.api('POST', '/api/v1/agent/2fa', { key: apiKey, body: { action: 'disable', factorCode: current } })).status, 403);
});

t.test('code attempts are rate limited per account', async (t) => {
  const clock = new ManualClock('2026-03-01T10:00:00Z');
  const app = await startApp(t, {}, { clock });
  const { apiKey } = await app.register();
  const totp = totpFromUrl((await app.api('POST', '/api/v1/agent/2fa', { key: apiKey, body: { action: 'enroll' } })).body.otpauthUrl);
  const good = totp.generate({ timestamp: clock.now().getTime() });
  const bad = good === '999999' ? '999998' : '999999';
  for (let i = 0; i < 10; i += 1) {
    t.equal((await app.api('POST', '/api/v1/agent/2fa', { key: apiKey, body: { action: 'confirm', factorCode: bad } })).status, 403);
  }
  const limited = await app.api('POST', '/api/v1/agent/2fa', { key: apiKey, body: { action: 'confirm', factorCode: good } });
  t.equal(limited.status, 429, 'even a right code waits once the attempts are spent');
  t.ok(Number(limited.headers.get('retry-after')) > 0);
});

t.test('limited keys cannot manage two-factor', async (t) => {
  const app = await startApp(t);
  const { apiKey } = await app.register();
  const limited = await issueAccessKey(app, apiKey, { name: 'r', kind: 'mail', permissions: ['mail:read'] });
  t.equal((await app.api('POST', '/api/v1/agent/2fa', { key: limited.apiKey, body: { action: 'enroll' } })).status, 403);
  t.equal((await app.api('POST', '/api/v1/agent/2fa', { key: apiKey, body: { action: 'off' } })).status, 400);
});

t.test('an operator resets two-factor for a lost device with the admin CLI', async (t) => {
  const clock = new ManualClock('2026-03-01T10:00:00Z');
  const app = await startApp(t, {}, { clock });
  const { apiKey, email } = await app.register();
  const key = await issueAccessKey(app, apiKey, { name: 'r', kind: 'mail', permissions: ['mail:read'] });
  await enableTwoFactor(app, apiKey, () => clock.now().getTime());
  t.equal((await app.api('DELETE', `/api/v1/agent/access-keys/${key.id}`, { key: apiKey })).status, 403);
  const output: string[] = [];
  const write = process.stdout.write.bind(process.stdout);
  process.stdout.write = ((chunk: string) => output.push(String(chunk)) > 0) as typeof process.stdout.write;
  let code: number;
  try {
    code = await runCli(['2fa', 'reset', email, '--data-dir', app.app.config.dataDir]);
  } finally {
    process.stdout.write = write;
  }
  t.equal(code, 0);
  t.same(output, ['two-factor turned off\n']);
  t.equal((await app.api('DELETE', `/api/v1/agent/access-keys/${key.id}`, { key: apiKey })).status, 200, 'no code needed any more');
  t.equal((await app.api('POST', '/api/v1/agent/2fa', { key: apiKey, body: { action: 'enroll' } })).status, 200, 'enroll again');
});
