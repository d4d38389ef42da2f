import t from 'tap';
import { ManualClock } from '../src/core/clock.js';
import { HTTP_STATUS_OF } from '../src/core/errors.js';
import { startApp, type TestApp } from './helpers/app.js';
import { issueAccessKey } from './helpers/keys.js';
import { rawMcp } from './helpers/mcp.js';
import { smtpSend } from './helpers/smtp.js';

/**
 * Every endpoint x every kind of caller -> the status it must get (issue 6 tests).
 * Each scenario gets its own account, so a row that changes state (prepare, activate)
 * only changes that scenario's account; rows run in the order listed.
 */
type Scenario = 'full' | 'read' | 'send' | 'readSend' | 'domainsRead' | 'revoked' | 'expired' | 'replacementBefore' | 'replacementAfter' | 'oldAfterActivation';

const SCENARIOS: readonly Scenario[] = [
  'full',
  'read',
  'send',
  'readSend',
  'domainsRead',
  'revoked',
  'expired',
  'replacementBefore',
  'replacementAfter',
  'oldAfterActivation',
];

interface Fixture {
  app: TestApp;
  key: string;
  /** The full key that set this account up (for setup only). */
  owner: string;
  messageId: string;
  victimKeyId: string;
  /** The account's own address, a local recipient every send policy below allows. */
  email: string;
  /** A submission the full key sent: limited keys must not see it. */
  ownerSubmissionId: string;
}

interface Row {
  name: string;
  /** An MCP tool call: compared as the HTTP status its error code maps to (200 when it succeeds). */
  mcp?: { tool: string; args: (f: Fixture) => Record<string, unknown> };
  method: string;
  path: (f: Fixture) => string;
  body?: (f: Fixture) => unknown;
  headers?: () => Record<string, string>;
  expect: Record<Scenario, number>;
}

const SEND_POLICY = { dailyRecipientLimit: 5, totalRecipientLimit: 10 };

/**
 * Statuses by caller class: `full` for the full key and a pending or activated replacement,
 * one per limited permission set, 401 for the revoked, expired and superseded keys.
 */
const expect = (
  full: number,
  limited: { read: number; send: number; readSend: number; domainsRead: number },
  overrides: Partial<Record<Scenario, number>> = {},
): Record<Scenario, number> => ({
  full,
  ...limited,
  revoked: 401,
  expired: 401,
  replacementBefore: full,
  replacementAfter: full,
  oldAfterActivation: 401,
  ...overrides,
});
const allLimited = (status: number) => ({ read: status, send: status, readSend: status, domainsRead: status });
const SENDERS = { read: 403, send: 200, readSend: 200, domainsRead: 403 };
const noAuth = (status: number): Record<Scenario, number> => Object.fromEntries(SCENARIOS.map((scenario) => [scenario, status])) as Record<Scenario, number>;

/** Webhook management is for the full key only (contract Authentication 4 and 6). */
function webhookRows(): Row[] {
  const unknown = '00000000-0000-4000-8000-000000000000';
  const fullOnly = (status: number) => expect(status, allLimited(403));
  return [
    {
      name: 'POST /webhooks (plain http refused)',
      method: 'POST',
      path: () => '/api/v1/agent/webhooks',
      body: () => ({ url: 'http://hooks.example.com/in' }),
      expect: fullOnly(400),
    },
    { name: 'GET /webhooks', method: 'GET', path: () => '/api/v1/agent/webhooks', expect: fullOnly(200) },
    { name: 'POST /webhooks/{id}/verify', method: 'POST', path: () => `/api/v1/agent/webhooks/${unknown}/verify`, expect: fullOnly(404) },
    { name: 'DELETE /webhooks/{id}', method: 'DELETE', path: () => `/api/v1/agent/webhooks/${unknown}`, expect: fullOnly(404) },
    { name: 'GET /webhooks/deliveries', method: 'GET', path: () => '/api/v1/agent/webhooks/deliveries', expect: fullOnly(200) },
    { name: 'GET /webhooks/deliveries/{id}', method: 'GET', path: () => `/api/v1/agent/webhooks/deliveries/${unknown}`, expect: fullOnly(404) },
    { name: 'POST /webhooks/deliveries/{id} (replay)', method: 'POST', path: () => `/api/v1/agent/webhooks/deliveries/${unknown}`, expect: fullOnly(404) },
  ];
}

let forwarded = 0;
const ROWS: Row[] = [
  { name: 'GET /healthz', method: 'GET', path: () => '/healthz', expect: noAuth(200) },
  { name: 'GET /api/v1/openapi.json', method: 'GET', path: () => '/api/v1/openapi.json', expect: noAuth(200) },
  {
    name: 'POST /register (no authentication)',
    method: 'POST',
    path: () => '/api/v1/agent/register',
    body: () => ({ agentId: 'table' }),
    headers: () => ({ 'x-forwarded-for': `10.9.${Math.floor((forwarded += 1) / 250)}.${forwarded % 250}` }),
    expect: noAuth(201),
  },
  { name: 'GET /inbox', method: 'GET', path: () => '/api/v1/agent/inbox', expect: expect(200, { read: 200, send: 403, readSend: 200, domainsRead: 403 }) },
  {
    name: 'GET /inbox?folder=Sent',
    method: 'GET',
    path: () => '/api/v1/agent/inbox?folder=Sent',
    expect: expect(200, { read: 200, send: 403, readSend: 200, domainsRead: 403 }),
  },
  {
    name: 'GET /email/{id}?markAsRead=false',
    method: 'GET',
    path: (f) => `/api/v1/agent/email/${f.messageId}?markAsRead=false`,
    expect: expect(200, { read: 200, send: 403, readSend: 200, domainsRead: 403 }),
  },
  {
    name: 'GET /email/{id}?markAsRead=true',
    method: 'GET',
    path: (f) => `/api/v1/agent/email/${f.messageId}?markAsRead=true`,
    expect: expect(200, { read: 400, send: 403, readSend: 400, domainsRead: 403 }),
  },
  {
    name: 'GET /email/{id}',
    method: 'GET',
    path: (f) => `/api/v1/agent/email/${f.messageId}`,
    expect: expect(200, { read: 200, send: 403, readSend: 200, domainsRead: 403 }),
  },
  {
    name: 'POST /send',
    method: 'POST',
    path: () => '/api/v1/agent/send',
    body: (f) => ({ to: f.email, subject: 'table', text: 'x' }),
    expect: expect(200, SENDERS),
  },
  { name: 'GET /sending (either key)', method: 'GET', path: () => '/api/v1/agent/sending', expect: expect(200, allLimited(200)) },
  { name: 'GET /outbound', method: 'GET', path: () => '/api/v1/agent/outbound', expect: expect(200, SENDERS) },
  {
    name: "GET /outbound/{id} of the full key's send",
    method: 'GET',
    path: (f) => `/api/v1/agent/outbound/${f.ownerSubmissionId}`,
    // A limited key reads only its own receipts.
    expect: expect(200, { read: 403, send: 404, readSend: 404, domainsRead: 403 }),
  },
  ...webhookRows(),
  // Suppressions are account-wide: a mail:send key sends and reads only its own receipts.
  { name: 'GET /outbound/suppressions', method: 'GET', path: () => '/api/v1/agent/outbound/suppressions', expect: expect(200, allLimited(403)) },
  {
    name: 'DELETE /outbound/suppressions/{id}',
    method: 'DELETE',
    path: () => '/api/v1/agent/outbound/suppressions/00000000-0000-4000-8000-000000000000',
    expect: expect(404, allLimited(403)),
  },
  { name: 'GET /balance', method: 'GET', path: () => '/api/v1/agent/balance', expect: expect(200, allLimited(200)) },
  { name: 'GET /keys', method: 'GET', path: () => '/api/v1/agent/keys', expect: expect(200, allLimited(403)) },
  {
    name: 'POST /access-keys',
    method: 'POST',
    path: () => '/api/v1/agent/access-keys',
    body: () => ({ name: 'table', kind: 'mail', permissions: ['mail:read'] }),
    expect: expect(201, allLimited(403)),
  },
  { name: 'GET /access-keys', method: 'GET', path: () => '/api/v1/agent/access-keys', expect: expect(200, allLimited(403)) },
  {
    name: 'DELETE /access-keys/{id}',
    method: 'DELETE',
    path: (f) => `/api/v1/agent/access-keys/${f.victimKeyId}`,
    expect: expect(200, allLimited(403)),
  },
  { name: 'POST /2fa enroll', method: 'POST', path: () => '/api/v1/agent/2fa', body: () => ({ action: 'enroll' }), expect: expect(200, allLimited(403)) },
  {
    name: 'POST /2fa disable (2FA off)',
    method: 'POST',
    path: () => '/api/v1/agent/2fa',
    body: () => ({ action: 'disable', factorCode: '123456' }),
    expect: expect(409, allLimited(403)),
  },
  {
    name: 'POST /keys prepare',
    method: 'POST',
    path: () => '/api/v1/agent/keys',
    body: () => ({ action: 'prepare' }),
    // The replacement-before account already has a pending replacement.
    expect: expect(200, allLimited(403), { replacementBefore: 409 }),
  },
  {
    name: 'POST /keys cancel',
    method: 'POST',
    path: () => '/api/v1/agent/keys',
    body: () => ({ action: 'cancel' }),
    // Only the original may cancel; the pending replacement itself may not.
    expect: expect(200, allLimited(403), { replacementBefore: 403 }),
  },
  {
    name: 'POST /keys activate',
    method: 'POST',
    path: () => '/api/v1/agent/keys',
    body: () => ({ action: 'activate' }),
    // Nothing pending after the cancel row, except for the replacement-before account, which activates itself.
    expect: expect(409, allLimited(403), { replacementBefore: 200 }),
  },
];

const READERS = { read: 200, send: 403, readSend: 200, domainsRead: 403 };
const mcpRow = (tool: string, args: (f: Fixture) => Record<string, unknown>, statuses: Record<Scenario, number>): Row => ({
  name: `MCP ${tool}`,
  mcp: { tool, args },
  method: 'POST',
  path: () => '/mcp',
  expect: statuses,
});
const MCP_ROWS: Row[] = [
  mcpRow('send_email', (f) => ({ to: f.email, subject: 'by mcp', text: 'x' }), expect(200, SENDERS)),
  mcpRow('check_inbox', () => ({}), expect(200, READERS)),
  mcpRow('get_email', (f) => ({ id: f.messageId, markAsRead: false }), expect(200, READERS)),
  mcpRow('check_balance', () => ({}), expect(200, allLimited(200))),
];

const callMcp = async (f: Fixture, row: Row): Promise<{ status: number; body: unknown }> => {
  const call = { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: row.mcp?.tool, arguments: row.mcp?.args(f) } };
  const response = await rawMcp(f.app.baseUrl, call, { 'mcp-protocol-version': '2025-11-25', authorization: `Bearer ${f.key}` });
  if (!response.body.result) throw new Error(`${row.name}: ${JSON.stringify(response.body)}`);
  const result = response.body.result as { isError?: boolean; content: { text: string }[] };
  const body = JSON.parse(result.content[0].text) as { code?: string };
  return { status: result.isError ? ((HTTP_STATUS_OF as Record<string, number>)[body.code ?? ''] ?? 500) : 200, body };
};

const permissionsOf: Partial<Record<Scenario, string[]>> = {
  read: ['mail:read'],
  send: ['mail:send'],
  readSend: ['mail:read', 'mail:send'],
  domainsRead: ['domains:read'],
};

const setUp = async (app: TestApp, clock: ManualClock, scenario: Scenario): Promise<Fixture> => {
  const { apiKey: owner, email } = await app.register();
  await app.app.services.accounts.addCredits(email, 20);
  await app.app.services.sending.setState(email, 'standard');
  const ownerSubmissionId = (await app.api('POST', '/api/v1/agent/send', { key: owner, body: { to: email, subject: 'by the owner', text: 'x' } })).body.id;
  await smtpSend(app.smtpPort, { from: 'someone@example.org', to: email, subject: `for ${scenario}`, text: 'hello' });
  const messageId = (await app.api('GET', '/api/v1/agent/inbox', { key: owner })).body.emails[0].id;
  const victim = await issueAccessKey(app, owner, { name: 'victim', kind: 'mail', permissions: ['mail:read'] });
  const base = { app, owner, messageId, victimKeyId: victim.id, email, ownerSubmissionId };
  const permissions = permissionsOf[scenario];
  if (permissions) {
    const sendPolicy = permissions.includes('mail:send') ? SEND_POLICY : {};
    const kind = permissions[0].startsWith('domains') ? 'domain' : 'mail';
    return { ...base, key: (await issueAccessKey(app, owner, { name: scenario, kind, permissions, ...sendPolicy })).apiKey };
  }
  if (scenario === 'revoked') {
    const key = await issueAccessKey(app, owner, { name: 'revoked', kind: 'mail', permissions: ['mail:read', 'mail:send'], ...SEND_POLICY });
    await app.api('DELETE', `/api/v1/agent/access-keys/${key.id}`, { key: owner });
    return { ...base, key: key.apiKey };
  }
  if (scenario === 'expired') {
    const expiresAt = new Date(clock.now().getTime() + 60_000).toISOString();
    return { ...base, key: (await issueAccessKey(app, owner, { name: 'expiring', kind: 'mail', permissions: ['mail:read'], expiresAt })).apiKey };
  }
  if (scenario === 'full') return { ...base, key: owner };
  const replacement: string = (await app.api('POST', '/api/v1/agent/keys', { key: owner, body: { action: 'prepare' } })).body.apiKey;
  if (scenario === 'replacementBefore') return { ...base, key: replacement };
  await app.api('POST', '/api/v1/agent/keys', { key: replacement, body: { action: 'activate' } });
  return { ...base, owner: replacement, key: scenario === 'replacementAfter' ? replacement : owner };
};

t.test('every endpoint x every caller', async (t) => {
  const clock = new ManualClock('2026-03-01T10:00:00Z');
  const app = await startApp(t, {}, { clock });
  const fixtures = new Map<Scenario, Fixture>();
  for (const scenario of SCENARIOS) fixtures.set(scenario, await setUp(app, clock, scenario));
  // Past the expiring key's minute, well inside the replacement's 30 minutes.
  clock.advance(5 * 60_000);
  for (const scenario of SCENARIOS) {
    const fixture = fixtures.get(scenario) as Fixture;
    for (const row of [...MCP_ROWS, ...ROWS]) {
      const response = row.mcp
        ? await callMcp(fixture, row)
        : await app.api(row.method, row.path(fixture), { key: fixture.key, body: row.body?.(fixture), headers: row.headers?.() });
      t.equal(response.status, row.expect[scenario], `${scenario}: ${row.name} -> ${JSON.stringify(response.body).slice(0, 120)}`);
    }
  }
});

t.test('a limited key never reaches key management even with a malformed body', async (t) => {
  const app = await startApp(t);
  const { apiKey } = await app.register();
  const limited = await issueAccessKey(app, apiKey, { name: 'r', kind: 'mail', permissions: ['mail:read'] });
  for (const path of ['/api/v1/agent/keys', '/api/v1/agent/access-keys', '/api/v1/agent/2fa']) {
    t.equal((await app.api('POST', path, { key: limited.apiKey, body: { nonsense: true } })).status, 403, path);
  }
  t.equal((await app.api('GET', '/api/v1/agent/inbox', { key: `svc_access_${'0'.repeat(64)}` })).status, 401, 'unknown limited key');
});
