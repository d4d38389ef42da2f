import t from 'tap';
import { startApp } from './helpers/app.js';

t.test('registration creates an account, a mailbox and a key', async (t) => {
  const { api } = await startApp(t);
  const response = await api('POST', '/api/v1/agent/register', { body: { agentId: 'Research.Bot..v2', name: 'Research' } });
  t.equal(response.status, 201);
  t.match(response.body, {
    success: true,
    credits: 0,
    mailboxReady: true,
    apiKey: /^svc_[0-9a-f]{64}$/,
    userId: /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/,
    email: /^agent-research\.bot\.v2-[a-z0-9]{6}@agents\.localhost$/,
  });
  const balance = await api('GET', '/api/v1/agent/balance', { key: response.body.apiKey });
  t.same(balance.body, { credits: 0, email: response.body.email, accountStatus: 'active' });
});

t.test('a long agentId is cut so the local part stays within 64 octets', async (t) => {
  const { api } = await startApp(t);
  const agentId = 'a'.repeat(64);
  const response = await api('POST', '/api/v1/agent/register', { body: { agentId } });
  t.equal(response.status, 201);
  const local = response.body.email.split('@')[0];
  t.equal(local.length, 64);
  t.match(local, /^agent-a{51}-[a-z0-9]{6}$/);
});

t.test('registration input is validated', async (t) => {
  const { api } = await startApp(t);
  const cases: [unknown, string][] = [
    [{}, 'agentId'],
    [{ agentId: '-leading' }, 'agentId'],
    [{ agentId: 'a'.repeat(65) }, 'agentId'],
    [{ agentId: 'ok', name: 'n'.repeat(101) }, 'name'],
    [{ agentId: 'ok', extra: 1 }, 'extra'],
    [{ agentId: 5 }, 'agentId'],
  ];
  // Each from its own address: malformed requests count against the limit too.
  for (const [index, [body, field]] of cases.entries()) {
    const response = await api('POST', '/api/v1/agent/register', { body, headers: { 'x-forwarded-for': `192.0.2.${index + 1}` } });
    t.equal(response.status, 400, JSON.stringify(body));
    t.equal(response.body.code, 'invalid_input');
    t.match(response.body.error, field);
  }
  const notJson = await api('POST', '/api/v1/agent/register', {
    body: '{oops',
    headers: { 'content-type': 'application/json', 'x-forwarded-for': '192.0.2.99' },
  });
  t.equal(notJson.status, 400);
});

t.test('every request that reaches register counts toward the 5 an hour, malformed, too large and successful alike', async (t) => {
  const { api } = await startApp(t, { http: { maxSmallBodyBytes: 1024 } });
  const from = (address: string, body: unknown, headers: Record<string, string> = {}) =>
    api('POST', '/api/v1/agent/register', { body, headers: { 'x-forwarded-for': address, ...headers } });
  const address = '198.51.100.20';
  t.equal((await from(address, { agentId: '-bad' })).status, 400);
  t.equal((await from(address, '{not json', { 'content-type': 'application/json' })).status, 400);
  t.equal((await from(address, { agentId: 'x'.repeat(2000) })).status, 413, 'a body over the small limit');
  t.equal((await from(address, { agentId: 'ok1' })).status, 201);
  t.equal((await from(address, { agentId: 'ok2' })).status, 201);
  const sixth = await from(address, { agentId: 'ok3' });
  t.equal(sixth.status, 429, 'three refused and two made: the sixth request is over the limit');
  t.match(sixth.body.error, /too many registration requests/);
  t.ok(Number(sixth.headers.get('retry-after')) > 0);
  t.equal((await from(address, { agentId: '-bad' })).status, 429, 'a malformed one over the limit is refused before it is read');
  t.equal((await from('198.51.100.21', { agentId: 'ok4' })).status, 201, 'another address is counted apart');
});

t.test('5 registrations per IP per hour, counted in the database across a restart', async (t) => {
  const first = await startApp(t, { http: { trustProxy: false } });
  for (let i = 0; i < 5; i += 1) {
    const ok = await first.api('POST', '/api/v1/agent/register', { body: { agentId: `bot${i}` } });
    t.equal(ok.status, 201);
  }
  const sixth = await first.api('POST', '/api/v1/agent/register', { body: { agentId: 'bot6' }, headers: { 'x-forwarded-for': '203.0.113.9' } });
  t.equal(sixth.status, 429, 'X-Forwarded-For is ignored without http.trustProxy');
  t.ok(Number(sixth.headers.get('retry-after')) > 0);
  await first.app.stop();
  const again = await startApp(t, { dataDir: first.app.config.dataDir, http: { trustProxy: false } });
  const afterRestart = await again.api('POST', '/api/v1/agent/register', { body: { agentId: 'bot7' } });
  t.equal(afterRestart.status, 429);
});

t.test('with http.trustProxy the forwarded client address is counted', async (t) => {
  const { api } = await startApp(t, { http: { trustProxy: true } });
  for (let i = 0; i < 5; i += 1) {
    await api('POST', '/api/v1/agent/register', { body: { agentId: `bot${i}` }, headers: { 'x-forwarded-for': '203.0.113.9' } });
  }
  const blocked = await api('POST', '/api/v1/agent/register', { body: { agentId: 'x' }, headers: { 'x-forwarded-for': '203.0.113.9' } });
  t.equal(blocked.status, 429);
  const other = await api('POST', '/api/v1/agent/register', { body: { agentId: 'y' }, headers: { 'x-forwarded-for': '203.0.113.10' } });
  t.equal(other.status, 201);
});
