import t from 'tap';
import { addVerifiedDomain, domainKey, startDomainApp } from './helpers/domains.js';
import { issueAccessKey } from './helpers/keys.js';
import { mcpClient } from './helpers/mcp.js';

/**
 * Every domain endpoint x every kind of caller -> the status it must get. The holder is an
 * agent whose keys manage its domains; "other" is another agent with domains of its own.
 * Rows that change or remove something get fresh fixtures from the holder for each caller.
 */
type Caller = 'holderWrite' | 'holderFull' | 'holderRead' | 'holderWriteOnly' | 'otherWrite' | 'otherFull' | 'mailRead' | 'mailSend' | 'none' | 'revoked';

const CALLERS: readonly Caller[] = [
  'holderWrite',
  'holderFull',
  'holderRead',
  'holderWriteOnly',
  'otherWrite',
  'otherFull',
  'mailRead',
  'mailSend',
  'none',
  'revoked',
];

interface Fixture {
  domainId: string;
  aliasId: string;
  mailboxId: string;
}

interface Row {
  name: string;
  method: string;
  path: (f: Fixture) => string;
  body?: () => unknown;
  /** Makes what the row changes, per caller (a domain to delete, an alias, a mailbox). */
  fresh?: boolean;
  read: boolean;
  /** The holder's success; another holder gets `otherStatus` (its own list, or not found). */
  ok: number;
  otherStatus: number;
}

let counter = 0;
const ROWS: Row[] = [
  { name: 'GET /domains', method: 'GET', path: () => '/api/user/domains', read: true, ok: 200, otherStatus: 200 },
  {
    name: 'POST /domains',
    method: 'POST',
    path: () => '/api/user/domains',
    body: () => ({ domain: `new${(counter += 1)}.example` }),
    read: false,
    ok: 200,
    otherStatus: 200,
  },
  { name: 'GET /domains/{id}', method: 'GET', path: (f) => `/api/user/domains/${f.domainId}`, read: true, ok: 200, otherStatus: 404 },
  { name: 'POST /domains/{id}/verify', method: 'POST', path: (f) => `/api/user/domains/${f.domainId}/verify`, read: false, ok: 200, otherStatus: 404 },
  { name: 'GET /domains/{id}/aliases', method: 'GET', path: (f) => `/api/user/domains/${f.domainId}/aliases`, read: true, ok: 200, otherStatus: 404 },
  {
    name: 'POST /domains/{id}/aliases',
    method: 'POST',
    path: (f) => `/api/user/domains/${f.domainId}/aliases`,
    body: () => ({ localPart: `alias${(counter += 1)}`, mailbox: holderEmail }),
    read: false,
    ok: 200,
    otherStatus: 404,
  },
  {
    name: 'GET /domains/{id}/aliases/{aliasId}',
    method: 'GET',
    path: (f) => `/api/user/domains/${f.domainId}/aliases/${f.aliasId}`,
    read: true,
    ok: 200,
    otherStatus: 404,
  },
  {
    name: 'DELETE /domains/{id}/aliases/{aliasId}',
    method: 'DELETE',
    path: (f) => `/api/user/domains/${f.domainId}/aliases/${f.aliasId}`,
    fresh: true,
    read: false,
    ok: 200,
    otherStatus: 404,
  },
  { name: 'GET /domains/{id}/mailboxes', method: 'GET', path: (f) => `/api/user/domains/${f.domainId}/mailboxes`, read: true, ok: 200, otherStatus: 404 },
  {
    name: 'POST /domains/{id}/mailboxes',
    method: 'POST',
    path: (f) => `/api/user/domains/${f.domainId}/mailboxes`,
    body: () => ({ localPart: `box${(counter += 1)}` }),
    read: false,
    ok: 200,
    otherStatus: 404,
  },
  {
    name: 'GET /domains/{id}/mailboxes/{mailboxId}',
    method: 'GET',
    path: (f) => `/api/user/domains/${f.domainId}/mailboxes/${f.mailboxId}`,
    read: true,
    ok: 200,
    otherStatus: 404,
  },
  {
    name: 'DELETE /domains/{id}/mailboxes/{mailboxId}',
    method: 'DELETE',
    path: (f) => `/api/user/domains/${f.domainId}/mailboxes/${f.mailboxId}`,
    fresh: true,
    read: false,
    ok: 200,
    otherStatus: 404,
  },
  { name: 'DELETE /domains/{id}', method: 'DELETE', path: (f) => `/api/user/domains/${f.domainId}`, fresh: true, read: false, ok: 200, otherStatus: 404 },
];

let holderEmail = '';

const expected = (row: Row, caller: Caller): number => {
  switch (caller) {
    case 'holderWrite':
    case 'holderFull':
      return row.ok;
    case 'holderRead':
      return row.read ? row.ok : 403;
    case 'holderWriteOnly':
      return row.read ? 403 : row.ok;
    case 'otherWrite':
    case 'otherFull':
      return row.otherStatus;
    case 'mailRead':
    case 'mailSend':
      return 403;
    case 'none':
    case 'revoked':
      return 401;
  }
};

t.test('every domain endpoint with every kind of caller', async (t) => {
  const { app, dns } = await startDomainApp(t, { limits: { personalPlan: { domains: 50, aliases: 100, mailboxes: 100 } } });
  const holder = await app.register('holder');
  holderEmail = holder.email;
  await app.app.services.hosting.grant(holder.email, 30);
  const holderKey = await domainKey(app, holder.apiKey);
  const base = await addVerifiedDomain(app, dns, holderKey, 'team.example');
  const other = await app.register('other');
  const otherKey = await domainKey(app, other.apiKey);
  const revoked = await issueAccessKey(app, holder.apiKey, { name: 'gone', kind: 'domain', permissions: ['domains:read', 'domains:write'] });
  t.equal((await app.api('DELETE', `/api/v1/agent/access-keys/${revoked.id}`, { key: holder.apiKey })).status, 200);
  const keys: Record<Caller, string | undefined> = {
    holderWrite: holderKey,
    holderFull: holder.apiKey,
    holderRead: await domainKey(app, holder.apiKey, ['domains:read']),
    holderWriteOnly: await domainKey(app, holder.apiKey, ['domains:write']),
    otherWrite: otherKey,
    otherFull: other.apiKey,
    mailRead: (await issueAccessKey(app, holder.apiKey, { name: 'reader', kind: 'mail', permissions: ['mail:read'] })).apiKey,
    mailSend: (
      await issueAccessKey(app, holder.apiKey, { name: 'sender', kind: 'mail', permissions: ['mail:send'], dailyRecipientLimit: 5, totalRecipientLimit: 5 })
    ).apiKey,
    none: undefined,
    revoked: revoked.apiKey,
  };
  const alias = await app.api('POST', `/api/user/domains/${base.id}/aliases`, { key: holderKey, body: { localPart: 'team', mailbox: holder.email } });
  const mailbox = await app.api('POST', `/api/user/domains/${base.id}/mailboxes`, { key: holderKey, body: { localPart: 'ops' } });
  const shared: Fixture = { domainId: base.id, aliasId: alias.body.id, mailboxId: mailbox.body.id };

  const freshFixture = async (row: Row): Promise<Fixture> => {
    if (row.name.startsWith('DELETE /domains/{id}/aliases')) {
      const made = await app.api('POST', `/api/user/domains/${base.id}/aliases`, {
        key: holderKey,
        body: { localPart: `gone${(counter += 1)}`, mailbox: holder.email },
      });
      return { ...shared, aliasId: made.body.id };
    }
    if (row.name.startsWith('DELETE /domains/{id}/mailboxes')) {
      const made = await app.api('POST', `/api/user/domains/${base.id}/mailboxes`, { key: holderKey, body: { localPart: `gone${(counter += 1)}` } });
      return { ...shared, mailboxId: made.body.id };
    }
    const made = await app.api('POST', '/api/user/domains', { key: holderKey, body: { domain: `extra${(counter += 1)}.example` } });
    return { ...shared, domainId: made.body.id };
  };

  for (const row of ROWS) {
    for (const caller of CALLERS) {
      const fixture = row.fresh ? await freshFixture(row) : shared;
      const answer = await app.api(row.method, row.path(fixture), { key: keys[caller], body: row.body?.() });
      t.equal(answer.status, expected(row, caller), `${row.name} as ${caller}`);
      if (answer.status === 403 && caller.startsWith('mail')) t.match(answer.body.error, /mail keys cannot manage domains/);
    }
  }
});

t.test('domain keys get 403 on mail paths and MCP tools; MCP has no domain tool', async (t) => {
  const { app } = await startDomainApp(t);
  const agent = await app.register();
  const key = await domainKey(app, agent.apiKey);
  for (const [method, path, body] of [
    ['GET', '/api/v1/agent/inbox', undefined],
    ['GET', '/api/v1/agent/email/1?folder=INBOX', undefined],
    ['POST', '/api/v1/agent/send', { to: agent.email, subject: 'x', text: 'x' }],
    ['GET', '/api/v1/agent/outbound', undefined],
    ['GET', '/api/v1/agent/webhooks', undefined],
    ['POST', '/api/v1/agent/access-keys', { name: 'x', kind: 'mail', permissions: ['mail:read'] }],
  ] as const) {
    t.equal((await app.api(method, path, { key, body })).status, 403, `${method} ${path}`);
  }
  const client = await mcpClient(t, app.baseUrl, { key });
  const tools = (await client.listTools()).tools.map((tool) => tool.name);
  t.notOk(
    tools.some((name) => /domain|alias/i.test(name)),
    `no domain tool among ${tools.join(', ')}`,
  );
  const inbox = await client.callTool({ name: 'check_inbox', arguments: {} });
  t.equal(inbox.isError, true, 'a domain key reads no mail over MCP');
});
