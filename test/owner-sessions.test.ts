// Human owners: sign-up, sign-in and sign-out, owner session JWTs (jose, pinned algorithm,
// exp, session id checked against the store), the cookie's attributes, password rules and
// changes, sign-in limits, 2FA, and which credential each path accepts.
import { SignJWT } from 'jose';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { ManualClock } from '../src/core/clock.js';
import { startApp } from './helpers/app.js';
import { totpFromUrl } from './helpers/keys.js';
import { makeOwner, signIn } from './helpers/owners.js';

const PASSWORD = 'a long enough secret';

t.test('open sign-up: the same answer for a free and a taken email; the taken one keeps its password', async (t) => {
  const app = await startApp(t, { owners: { signup: 'open' } });
  const first = await app.api('POST', '/api/user/signup', { body: { email: 'Ada@Example.com', password: PASSWORD } });
  t.equal(first.status, 200);
  const again = await app.api('POST', '/api/user/signup', { body: { email: 'ada@example.com', password: 'another long secret' } });
  t.equal(again.status, 200);
  t.same(again.body, first.body, 'a taken email answers exactly like a free one');
  const session = await signIn(app, 'ada@example.com', PASSWORD);
  t.equal(session.email, 'ada@example.com', 'the login email is case-insensitive');
  await t.rejects(signIn(app, 'ada@example.com', 'another long secret'), /401/, 'the second sign-up changed nothing');
  const me = await app.api('GET', '/api/user/me', { key: session.token });
  t.equal(me.status, 200);
  t.match(me.body.address, /^ada-[a-z0-9]{6}@agents\.localhost$/, 'the owner mailbox is <login local part>-<6>@mailDomain');
  t.equal(me.body.twoFactor, 'off');
  const account = await app.app.store.accounts.byId(me.body.id);
  t.equal(account?.kind, 'human');
});

t.test('sign-up: invite mode refuses; short passwords and bad emails are 400; limited per address', async (t) => {
  const invite = await startApp(t);
  t.equal((await invite.api('POST', '/api/user/signup', { body: { email: 'a@example.com', password: PASSWORD } })).status, 403);
  const app = await startApp(t, { owners: { signup: 'open', signupsPerIpPerHour: 2 } });
  const short = await app.api('POST', '/api/user/signup', { body: { email: 'b@example.com', password: 'elevenchars' } });
  t.equal(short.status, 400);
  t.match(short.body.error, /at least 12/);
  t.equal((await app.api('POST', '/api/user/signup', { body: { email: 'not-an-address', password: PASSWORD } })).status, 400);
  const from = { 'x-forwarded-for': '10.1.1.1' };
  for (const email of ['c@example.com', 'd@example.com'])
    t.equal((await app.api('POST', '/api/user/signup', { body: { email, password: PASSWORD }, headers: from })).status, 200);
  const limited = await app.api('POST', '/api/user/signup', { body: { email: 'e@example.com', password: PASSWORD }, headers: from });
  t.equal(limited.status, 429);
  t.ok(limited.headers.get('retry-after'));
});

t.test('sign-in never tells an unknown email from a wrong password, and is limited per account and per address', async (t) => {
  const app = await startApp(t, { owners: { signInAttemptsPerAccountPer15Minutes: 3, signInAttemptsPerIpPer15Minutes: 5 } });
  const owner = await makeOwner(app, 'grace@example.com', PASSWORD);
  const wrong = await app.api('POST', '/api/user/session', {
    body: { email: owner.email, password: 'wrong password!' },
    headers: { 'x-forwarded-for': '10.2.0.1' },
  });
  const unknown = await app.api('POST', '/api/user/session', {
    body: { email: 'nobody@example.com', password: 'wrong password!' },
    headers: { 'x-forwarded-for': '10.2.0.2' },
  });
  t.equal(wrong.status, 401);
  t.same(unknown.body, wrong.body, 'one answer for both');
  const pending = await app.app.services.owners.createByOperator('pending@example.com');
  t.ok(pending.token);
  const noPassword = await app.api('POST', '/api/user/session', {
    body: { email: 'pending@example.com', password: 'wrong password!' },
    headers: { 'x-forwarded-for': '10.2.0.3' },
  });
  t.same(noPassword.body, wrong.body, 'an owner without a password yet answers alike');
  // Per account: the 1st attempt above and 2 more from other addresses; the 4th is refused even with the right password.
  for (const ip of ['10.2.1.1', '10.2.1.2'])
    await app.api('POST', '/api/user/session', { body: { email: owner.email, password: 'nope nope nope' }, headers: { 'x-forwarded-for': ip } });
  const locked = await app.api('POST', '/api/user/session', { body: { email: owner.email, password: PASSWORD }, headers: { 'x-forwarded-for': '10.2.1.3' } });
  t.equal(locked.status, 429, 'per account');
  // Per address: 5 attempts for different names from one address, then 429.
  for (let i = 0; i < 5; i += 1)
    await app.api('POST', '/api/user/session', {
      body: { email: `x${i}@example.com`, password: 'nope nope nope' },
      headers: { 'x-forwarded-for': '10.2.2.2' },
    });
  t.equal(
    (await app.api('POST', '/api/user/session', { body: { email: 'y@example.com', password: 'nope nope nope' }, headers: { 'x-forwarded-for': '10.2.2.2' } }))
      .status,
    429,
    'per address',
  );
});

t.test('the session cookie: HttpOnly, SameSite=Lax, Path=/; Secure with the __Host- prefix when baseUrl is https', async (t) => {
  const plain = await startApp(t);
  const owner = await makeOwner(plain);
  const response = await plain.api('POST', '/api/user/session', { body: { email: owner.email, password: owner.password } });
  const cookie = response.headers.get('set-cookie') ?? '';
  t.match(cookie, /^agentpost_session=[A-Za-z0-9_-]{43}; Path=\/; HttpOnly; SameSite=Lax; Expires=/);
  t.notMatch(cookie, /Secure/);
  // A TLS proxy would front this one; the test talks to its listener directly.
  const secure = await startApp(t, { baseUrl: 'https://mail.example.com' });
  await secure.app.services.owners.createByOperator('tls@example.com');
  const link = await secure.app.services.owners.linkByOperator('tls@example.com');
  await secure.app.services.owners.setPasswordWithLink(link, PASSWORD);
  const direct = await fetch(`http://127.0.0.1:${secure.app.ports.http}/api/user/session`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ email: 'tls@example.com', password: PASSWORD }),
  });
  t.equal(direct.status, 200);
  const secureCookie = direct.headers.get('set-cookie') ?? '';
  t.match(secureCookie, /^__Host-agentpost_session=[A-Za-z0-9_-]+; Path=\/; HttpOnly; SameSite=Lax; Secure; Expires=/);
});

t.test('JWT: expires after 15 minutes; sign-out and a password change end it at once', async (t) => {
  const clock = new ManualClock('2026-03-01T10:00:00Z');
  const app = await startApp(t, {}, { clock });
  const owner = await makeOwner(app, 'lin@example.com', PASSWORD);
  const signed = await app.api('POST', '/api/user/session', { body: { email: owner.email, password: PASSWORD } });
  t.equal(signed.body.expiresAt, '2026-03-01T10:15:00.000Z');
  clock.advance(14 * 60 * 1000);
  t.equal((await app.api('GET', '/api/user/me', { key: signed.body.token })).status, 200);
  clock.advance(60 * 1000);
  t.equal((await app.api('GET', '/api/user/me', { key: signed.body.token })).status, 401, 'exp is enforced');

  const a = await signIn(app, owner.email, PASSWORD);
  const b = await signIn(app, owner.email, PASSWORD);
  t.equal((await app.api('DELETE', '/api/user/session', { key: a.token })).status, 200);
  t.equal((await app.api('GET', '/api/user/me', { key: a.token })).status, 401, 'signed out');
  t.equal((await app.api('GET', '/api/user/me', { key: b.token })).status, 200, 'another session goes on');

  t.equal(
    (await app.api('POST', '/api/user/password', { key: b.token, body: { currentPassword: 'not it at all', newPassword: 'a brand new secret' } })).status,
    403,
  );
  t.equal((await app.api('POST', '/api/user/password', { key: b.token, body: { currentPassword: PASSWORD, newPassword: 'too short' } })).status, 400);
  const changed = await app.api('POST', '/api/user/password', { key: b.token, body: { currentPassword: PASSWORD, newPassword: 'a brand new secret' } });
  t.equal(changed.status, 200);
  t.equal((await app.api('GET', '/api/user/me', { key: b.token })).status, 401, 'the password change ended the old session');
  t.equal((await app.api('GET', '/api/user/me', { key: changed.body.token })).status, 200, 'the answer is a new session');
  await t.rejects(signIn(app, owner.email, PASSWORD), /401/);
  t.ok(await signIn(app, owner.email, 'a brand new secret'));
});

t.test('JWT: the algorithm is pinned; foreign keys, audiences and alg none are 401', async (t) => {
  const clock = new ManualClock('2026-03-01T10:00:00Z');
  const dataDir = t.testdir({});
  const app = await startApp(t, { dataDir }, { clock });
  const owner = await makeOwner(app);
  const sid = (await app.app.services.ownerSessions.tokens.verify(owner.token))?.sessionId as string;
  const key = Buffer.from(readFileSync(join(dataDir, 'session.key'), 'utf8').trim(), 'hex');
  const now = Math.floor(clock.now().getTime() / 1000);
  const forge = (alg: string, signingKey: Uint8Array, audience = 'agentpost:/api/user') =>
    new SignJWT({ sid })
      .setProtectedHeader({ alg })
      .setIssuer('agentpost')
      .setAudience(audience)
      .setSubject(owner.id)
      .setIssuedAt(now)
      .setExpirationTime(now + 600)
      .sign(signingKey);
  t.equal((await app.api('GET', '/api/user/me', { key: await forge('HS256', key) })).status, 200, 'the control: a well-made token works');
  t.equal((await app.api('GET', '/api/user/me', { key: await forge('HS512', Buffer.concat([key, key])) })).status, 401, 'another HMAC algorithm');
  t.equal((await app.api('GET', '/api/user/me', { key: await forge('HS256', Buffer.alloc(32, 7)) })).status, 401, 'another key');
  t.equal((await app.api('GET', '/api/user/me', { key: await forge('HS256', key, 'agentpost:/api/v1/agent') })).status, 401, 'another audience');
  const [header, payload] = owner.token.split('.');
  const none = `${Buffer.from(JSON.stringify({ alg: 'none', typ: 'JWT' })).toString('base64url')}.${payload}.x`;
  t.equal((await app.api('GET', '/api/user/me', { key: none })).status, 401, 'alg none');
  t.equal((await app.api('GET', '/api/user/me', { key: `${header}.${payload}.AAAA` })).status, 401, 'a bad signature');
});

t.test('which credential each path takes: API keys 403 on /api/user/*, owner JWTs 403 on /api/v1/agent/*', async (t) => {
  const app = await startApp(t);
  const owner = await makeOwner(app);
  const agent = await app.register();
  const keyOnUser = await app.api('GET', '/api/user/me', { key: agent.apiKey });
  t.equal(keyOnUser.status, 403);
  t.match(keyOnUser.body.error, /owner session/);
  t.equal((await app.api('GET', '/api/user/me')).status, 401, 'nothing');
  t.equal((await app.api('GET', '/api/user/me', { headers: { cookie: owner.cookie } })).status, 401, 'the console cookie is not an API credential');
  for (const path of ['/api/v1/agent/balance', '/api/v1/agent/inbox', '/api/v1/agent/sending']) {
    const response = await app.api('GET', path, { key: owner.token });
    t.equal(response.status, 403, path);
    t.match(response.body.error, /\/api\/user/);
  }
});

t.test('two-factor for owners: enroll, confirm, then sign-in needs the code', async (t) => {
  const clock = new ManualClock('2026-03-01T10:00:00Z');
  const app = await startApp(t, {}, { clock });
  const owner = await makeOwner(app, 'tess@example.com', PASSWORD);
  const enrolled = await app.api('POST', '/api/user/2fa', { key: owner.token, body: { action: 'enroll' } });
  t.equal(enrolled.status, 200);
  t.match(enrolled.body.otpauthUrl, /tess%40example\.com|tess@example\.com/);
  const totp = totpFromUrl(enrolled.body.otpauthUrl);
  const code = (at: number) => totp.generate({ timestamp: at });
  t.equal(
    (await app.api('POST', '/api/user/2fa', { key: owner.token, body: { action: 'confirm', factorCode: code(clock.now().getTime()) } })).body.status,
    'enabled',
  );
  clock.advance(60_000);
  const without = await app.api('POST', '/api/user/session', { body: { email: owner.email, password: PASSWORD } });
  t.equal(without.status, 401);
  t.match(without.body.error, /factorCode/);
  const wrong = await app.api('POST', '/api/user/session', { body: { email: owner.email, password: PASSWORD, factorCode: '000000' } });
  t.equal(wrong.status, 401);
  const right = await signIn(app, owner.email, PASSWORD, code(clock.now().getTime()));
  t.ok(right.token);
  t.equal((await app.api('GET', '/api/user/me', { key: right.token })).body.twoFactor, 'enabled');
});

t.test('an operator-made owner: the one-time link works once and expires', async (t) => {
  const clock = new ManualClock('2026-03-01T10:00:00Z');
  const app = await startApp(t, {}, { clock });
  const { owners } = app.app.services;
  const { account, token } = await owners.createByOperator('Ops@Example.com');
  t.equal(account.kind, 'human');
  await t.rejects(() => owners.createByOperator('ops@example.com'), /exists already/);
  await t.rejects(owners.setPasswordWithLink(token, 'short'), /at least 12/);
  t.ok(await owners.linkIsUsable(token), 'a refused password does not use the link');
  await owners.setPasswordWithLink(token, PASSWORD);
  t.notOk(await owners.linkIsUsable(token));
  await t.rejects(owners.setPasswordWithLink(token, 'another long secret'), /used or has expired/);
  t.ok(await signIn(app, 'ops@example.com', PASSWORD));
  const later = await owners.linkByOperator('ops@example.com');
  clock.advance(73 * 60 * 60 * 1000);
  await t.rejects(owners.setPasswordWithLink(later, 'another long secret'), /used or has expired/, 'past owners.passwordLinkHours');
});
