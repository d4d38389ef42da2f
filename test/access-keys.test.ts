import t from 'tap';
import { ManualClock } from '../src/core/clock.js';
import { startApp } from './helpers/app.js';
import { enableTwoFactor, issueAccessKey } from './helpers/keys.js';
import { smtpSend } from './helpers/smtp.js';

const SENDER = { name: 'bot', kind: 'mail', permissions: ['mail:send'], dailyRecipientLimit: 20, totalRecipientLimit: 100 };

t.test('issue a limited key: secret once, policy as given, list without secrets', async (t) => {
  const clock = new ManualClock('2026-03-01T10:00:00Z');
  const app = await startApp(t, {}, { clock });
  const { apiKey } = await app.register();
  const created = await app.api('POST', '/api/v1/agent/access-keys', {
    key: apiKey,
    body: {
      ...SENDER,
      name: 'notifier',
      permissions: ['mail:send', 'mail:read'],
      expiresAt: '2026-04-01T00:00:00Z',
      allowedSenders: ['Me@Example.org'],
      allowedRecipients: ['a@example.org', 'b@example.org', 'A@example.org'],
    },
  });
  t.equal(created.status, 201);
  t.match(created.body, {
    apiKey: /^svc_access_[0-9a-f]{64}$/,
    name: 'notifier',
    kind: 'mail',
    status: 'active',
    permissions: ['mail:send', 'mail:read'],
    expiresAt: '2026-04-01T00:00:00.000Z',
    revokedAt: null,
    allowedSenders: ['me@example.org'],
    allowedRecipients: ['a@example.org', 'b@example.org'],
    dailyRecipientLimit: 20,
    totalRecipientLimit: 100,
    createdAt: '2026-03-01T10:00:00.000Z',
  });
  const reader = await issueAccessKey(app, apiKey, { name: 'reader', kind: 'mail', permissions: ['mail:read'] });
  const domains = await issueAccessKey(app, apiKey, { name: 'dns', kind: 'domain', permissions: ['domains:read', 'domains:write'] });
  const list = await app.api('GET', '/api/v1/agent/access-keys', { key: apiKey });
  t.equal(list.status, 200);
  t.same(list.body.accessKeys.map((key: any) => key.name).sort(), ['dns', 'notifier', 'reader']);
  t.notMatch(JSON.stringify(list.body), /svc_access_/, 'no secrets in the list');
  t.ok(reader.id && domains.id);
});

t.test('the request is validated', async (t) => {
  const app = await startApp(t);
  const { apiKey } = await app.register();
  const cases: [Record<string, unknown>, number, string][] = [
    [{ kind: 'mail', permissions: ['mail:read'] }, 400, 'name'],
    [{ name: 'x', kind: 'mail', permissions: [] }, 400, 'permissions'],
    [{ name: 'x', kind: 'files', permissions: ['mail:read'] }, 400, 'kind'],
    [{ name: 'x', kind: 'mail', permissions: ['mail:delete'] }, 400, 'permissions'],
    [{ name: 'x', kind: 'mail', permissions: ['mail:read', 'domains:read'] }, 400, 'domains:read'],
    [{ name: 'x', kind: 'domain', permissions: ['mail:read'] }, 400, 'mail:read'],
    [{ name: 'x', kind: 'mail', permissions: ['mail:draft'] }, 403, 'human owners'],
    [{ ...SENDER, dailyRecipientLimit: undefined }, 400, 'dailyRecipientLimit'],
    [{ ...SENDER, totalRecipientLimit: null }, 400, 'totalRecipientLimit'],
    [{ ...SENDER, dailyRecipientLimit: 0 }, 400, 'dailyRecipientLimit'],
    [{ ...SENDER, allowedRecipients: ['not an address'] }, 400, 'allowedRecipients'],
    [{ name: 'x', kind: 'mail', permissions: ['mail:read'], dailyRecipientLimit: 5 }, 400, 'dailyRecipientLimit'],
    [{ name: 'x', kind: 'mail', permissions: ['mail:read'], allowedSenders: ['a@b.org'] }, 400, 'allowedSenders'],
    [{ name: 'x', kind: 'mail', permissions: ['mail:read'], expiresAt: '2000-01-01T00:00:00Z' }, 400, 'expiresAt'],
    [{ name: 'x', kind: 'mail', permissions: ['mail:read'], expiresAt: 'tomorrow' }, 400, 'expiresAt'],
    [{ name: 'x', kind: 'mail', permissions: ['mail:read'], apiKey: 'svc_access_x' }, 400, 'apiKey'],
  ];
  for (const [body, status, field] of cases) {
    const response = await app.api('POST', '/api/v1/agent/access-keys', { key: apiKey, body });
    t.equal(response.status, status, JSON.stringify(body));
    t.match(response.body.error, field);
  }
  t.same((await app.api('GET', '/api/v1/agent/access-keys', { key: apiKey })).body.accessKeys, [], 'nothing was issued');
});

t.test('revoked and expired keys get 401; revocation is idempotent; the list puts usable keys first', async (t) => {
  const clock = new ManualClock('2026-03-01T10:00:00Z');
  const app = await startApp(t, {}, { clock });
  const { apiKey } = await app.register();
  const first = await issueAccessKey(app, apiKey, { name: 'first', kind: 'mail', permissions: ['mail:read'] });
  clock.advance(1000);
  const shortLived = await issueAccessKey(app, apiKey, { name: 'short', kind: 'mail', permissions: ['mail:read'], expiresAt: '2026-03-01T11:00:00Z' });
  clock.advance(1000);
  const last = await issueAccessKey(app, apiKey, { name: 'last', kind: 'mail', permissions: ['mail:read'] });

  const revoked = await app.api('DELETE', `/api/v1/agent/access-keys/${first.id}`, { key: apiKey });
  t.equal(revoked.status, 200);
  t.match(revoked.body, { id: first.id, status: 'revoked', revokedAt: '2026-03-01T10:00:02.000Z' });
  const again = await app.api('DELETE', `/api/v1/agent/access-keys/${first.id}`, { key: apiKey });
  t.same(again.body, revoked.body, 'idempotent');
  t.equal((await app.api('GET', '/api/v1/agent/inbox', { key: first.apiKey })).status, 401);

  t.equal((await app.api('GET', '/api/v1/agent/inbox', { key: shortLived.apiKey })).status, 200);
  clock.set('2026-03-01T11:00:00Z');
  t.equal((await app.api('GET', '/api/v1/agent/inbox', { key: shortLived.apiKey })).status, 401, 'expired at expiresAt');

  const list = (await app.api('GET', '/api/v1/agent/access-keys', { key: apiKey })).body.accessKeys;
  t.same(
    list.map((key: any) => [key.name, key.status]),
    [
      ['last', 'active'],
      ['short', 'expired'],
      ['first', 'revoked'],
    ],
  );
  t.equal((await app.api('DELETE', '/api/v1/agent/access-keys/no-such-key', { key: apiKey })).status, 404);
  const other = await app.register();
  t.equal((await app.api('DELETE', `/api/v1/agent/access-keys/${last.id}`, { key: other.apiKey })).status, 404, 'another account cannot see it');
});

t.test('with 2FA on, revocation needs a valid factorCode', async (t) => {
  const clock = new ManualClock('2026-03-01T10:00:00Z');
  const app = await startApp(t, {}, { clock });
  const { apiKey } = await app.register();
  const key = await issueAccessKey(app, apiKey, { name: 'r', kind: 'mail', permissions: ['mail:read'] });
  const totp = await enableTwoFactor(app, apiKey, () => clock.now().getTime());
  clock.advance(30_000);
  const path = `/api/v1/agent/access-keys/${key.id}`;
  t.equal((await app.api('DELETE', path, { key: apiKey })).status, 403, 'no code');
  t.equal((await app.api('DELETE', path, { key: apiKey, body: { factorCode: '12345' } })).status, 403, 'malformed code');
  const code = totp.generate({ timestamp: clock.now().getTime() });
  const wrong = code === '000000' ? '000001' : '000000';
  t.equal((await app.api('DELETE', path, { key: apiKey, body: { factorCode: wrong } })).status, 403, 'wrong code');
  t.equal((await app.api('GET', '/api/v1/agent/inbox', { key: key.apiKey })).status, 200, 'still usable');
  const done = await app.api('DELETE', path, { key: apiKey, body: { factorCode: code } });
  t.equal(done.status, 200);
  t.equal(done.body.status, 'revoked');
  t.equal((await app.api('DELETE', path, { key: apiKey })).status, 200, 'an already revoked key needs no code');
  t.equal((await app.api('GET', '/api/v1/agent/inbox', { key: key.apiKey })).status, 401);
});

t.test('mail:read reads every folder without changing flags; markAsRead=true is refused', async (t) => {
  const app = await startApp(t);
  const { apiKey, email } = await app.register();
  await smtpSend(app.smtpPort, { from: 'someone@example.org', to: email, subject: 'hello', text: 'body' });
  const reader = await issueAccessKey(app, apiKey, { name: 'r', kind: 'mail', permissions: ['mail:read'] });
  const inbox = await app.api('GET', '/api/v1/agent/inbox', { key: reader.apiKey });
  t.equal(inbox.body.emails.length, 1);
  const id = inbox.body.emails[0].id;
  t.equal((await app.api('GET', `/api/v1/agent/email/${id}?markAsRead=true`, { key: reader.apiKey })).status, 400);
  const read = await app.api('GET', `/api/v1/agent/email/${id}`, { key: reader.apiKey });
  t.equal(read.status, 200);
  t.equal(read.body.isRead, false);
  t.equal((await app.api('GET', `/api/v1/agent/email/${id}?markAsRead=false`, { key: reader.apiKey })).body.isRead, false);
  t.equal((await app.api('GET', '/api/v1/agent/inbox', { key: apiKey })).body.emails[0].isRead, false, 'the flag is unchanged');
  t.equal((await app.api('GET', '/api/v1/agent/inbox?folder=Sent', { key: reader.apiKey })).status, 200, 'every folder');
  t.equal((await app.api('GET', `/api/v1/agent/email/${id}`, { key: apiKey })).body.isRead, true, 'the full key still marks read');
});

t.test('at most 100 usable keys per account', async (t) => {
  const app = await startApp(t);
  const { apiKey } = await app.register();
  let firstId = '';
  for (let i = 0; i < 100; i += 1) {
    const key = await issueAccessKey(app, apiKey, { name: `k${i}`, kind: 'mail', permissions: ['mail:read'] });
    firstId ||= key.id;
  }
  const over = await app.api('POST', '/api/v1/agent/access-keys', { key: apiKey, body: { name: 'k100', kind: 'mail', permissions: ['mail:read'] } });
  t.equal(over.status, 409);
  t.equal((await app.api('DELETE', `/api/v1/agent/access-keys/${firstId}`, { key: apiKey })).status, 200);
  t.equal((await app.api('POST', '/api/v1/agent/access-keys', { key: apiKey, body: { name: 'k100', kind: 'mail', permissions: ['mail:read'] } })).status, 201);
  const list = (await app.api('GET', '/api/v1/agent/access-keys', { key: apiKey })).body.accessKeys;
  t.equal(list.length, 100, 'the list stops at 100');
  t.ok(
    list.every((key: any) => key.status === 'active'),
    'usable keys come first',
  );
});
