import { readFileSync } from 'node:fs';
import t from 'tap';
import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import { validateInput } from '../src/core/validate.js';
import { startApp } from './helpers/app.js';
import { callTool, mcpClient, nodeMcpPost, rawMcp } from './helpers/mcp.js';
import { smtpSend } from './helpers/smtp.js';

const PROTOCOL = '2025-11-25';
const schemaFile = (name: string): unknown => JSON.parse(readFileSync(new URL(`../schema/${name}`, import.meta.url), 'utf8'));

const TOOL_SCHEMAS: Record<string, string> = {
  register_agent: 'register-request.json',
  check_inbox: 'inbox-query.json',
  get_email: 'email-query.json',
  check_balance: 'empty.json',
  send_email: 'send-request.json',
  // Beside the contract's five (which stay as they are): the conversation tools.
  reply_email: 'reply-email-tool.json',
  list_threads: 'thread-list-query.json',
  get_thread: 'thread-query.json',
  wait_for_email: 'wait-for-email-tool.json',
  mark_junk: 'mark-junk-tool.json',
};

t.test('initialize answers protocol 2025-11-25, serverInfo and the tools capability', async (t) => {
  const { baseUrl } = await startApp(t);
  const raw = await rawMcp(baseUrl, {
    jsonrpc: '2.0',
    id: 1,
    method: 'initialize',
    params: { protocolVersion: PROTOCOL, capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
  });
  t.equal(raw.status, 200);
  t.match(raw.headers.get('content-type'), /^application\/json/, 'JSON, never SSE');
  t.equal(raw.headers.get('mcp-session-id'), null, 'stateless: no session');
  t.same(raw.body.result.protocolVersion, PROTOCOL);
  t.same(raw.body.result.serverInfo, { name: 'agentpost', version: JSON.parse(readFileSync('package.json', 'utf8')).version });
  t.ok(raw.body.result.capabilities.tools, 'tools capability');

  const client = await mcpClient(t, baseUrl);
  t.equal(client.getServerVersion()?.name, 'agentpost');
  t.ok(client.getServerCapabilities()?.tools);
});

t.test('notifications/initialized answers 202 with no body', async (t) => {
  const { baseUrl } = await startApp(t);
  for (const path of ['/mcp', '/api/mcp']) {
    const response = await rawMcp(baseUrl, { jsonrpc: '2.0', method: 'notifications/initialized' }, { 'mcp-protocol-version': PROTOCOL }, path);
    t.equal(response.status, 202, path);
    t.equal(response.text, '', path);
  }
});

t.test('tools/list: the five contract names, the conversation tools, and the very schema files as inputSchema', async (t) => {
  const { baseUrl } = await startApp(t);
  const client = await mcpClient(t, baseUrl);
  const { tools } = await client.listTools();
  t.same(tools.map((tool) => tool.name).sort(), Object.keys(TOOL_SCHEMAS).sort());
  for (const tool of tools) {
    t.same(tool.inputSchema, schemaFile(TOOL_SCHEMAS[tool.name]), `${tool.name} inputSchema is schema/${TOOL_SCHEMAS[tool.name]}`);
    t.ok(tool.description && tool.description.length > 10, `${tool.name} has a description`);
  }
});

t.test('GET and other methods answer 405 on both paths', async (t) => {
  const { baseUrl } = await startApp(t);
  for (const path of ['/mcp', '/api/mcp']) {
    for (const method of ['GET', 'DELETE', 'PUT']) {
      const response = await fetch(baseUrl + path, { method, headers: { accept: 'application/json, text/event-stream' } });
      t.equal(response.status, 405, `${method} ${path}`);
      t.equal(response.headers.get('allow'), 'POST');
      const body = await response.json();
      t.doesNotThrow(() => validateInput('mcp-message.json', body), 'the documented JSON-RPC shape');
      t.equal(body.jsonrpc, '2.0');
      t.equal(body.error.code, -32000);
    }
  }
});

t.test('an unsupported MCP-Protocol-Version answers 400; the supported one passes', async (t) => {
  const { baseUrl } = await startApp(t);
  const list = { jsonrpc: '2.0', id: 2, method: 'tools/list' };
  const bad = await rawMcp(baseUrl, list, { 'mcp-protocol-version': '1999-01-01' });
  t.equal(bad.status, 400);
  t.equal(bad.body.jsonrpc, '2.0');
  t.ok(bad.body.error, 'a JSON-RPC error');
  const good = await rawMcp(baseUrl, list, { 'mcp-protocol-version': PROTOCOL });
  t.equal(good.status, 200);
  t.equal(good.body.result.tools.length, Object.keys(TOOL_SCHEMAS).length);
});

t.test('unknown tool and unknown method are JSON-RPC errors', async (t) => {
  const { baseUrl } = await startApp(t);
  const client = await mcpClient(t, baseUrl);
  await t.rejects(client.callTool({ name: 'Check_Balance', arguments: {} }), { code: ErrorCode.InvalidParams }, 'names are case-sensitive');
  await t.rejects(client.callTool({ name: 'nope', arguments: {} }), McpError);
  const unknownMethod = await rawMcp(baseUrl, { jsonrpc: '2.0', id: 3, method: 'mail/delete' }, { 'mcp-protocol-version': PROTOCOL });
  t.equal(unknownMethod.status, 200);
  t.equal(unknownMethod.body.error.code, ErrorCode.MethodNotFound);
  t.equal(unknownMethod.body.result, undefined);
});

t.test('register_agent: no key, the REST answer, invalid arguments, the shared rate limit', async (t) => {
  const { baseUrl, api } = await startApp(t);
  const client = await mcpClient(t, baseUrl, { headers: { 'x-forwarded-for': '198.51.100.7' } });
  const created = await callTool(client, 'register_agent', { agentId: 'mcp.bot', name: 'MCP' });
  t.equal(created.isError, false);
  t.match(created.body, {
    success: true,
    credits: 0,
    mailboxReady: true,
    apiKey: /^svc_[0-9a-f]{64}$/,
    email: /^agent-mcp\.bot-[a-z0-9]{6}@agents\.localhost$/,
  });
  const balance = await api('GET', '/api/v1/agent/balance', { key: created.body.apiKey });
  t.equal(balance.status, 200, 'the key works over REST');
  t.equal(balance.body.email, created.body.email);

  // Invalid arguments count against the limit as well, so they come from another address here.
  const invalid = await mcpClient(t, baseUrl, { headers: { 'x-forwarded-for': '198.51.100.8' } });
  for (const [args, field] of [
    [{}, 'agentId'],
    [{ agentId: '-x' }, 'agentId'],
    [{ agentId: 'ok', extra: 1 }, 'extra'],
    [{ agentId: 5 }, 'agentId'],
  ] as const) {
    const failed = await callTool(invalid, 'register_agent', args);
    t.equal(failed.isError, true, JSON.stringify(args));
    t.equal(failed.body.code, 'invalid_input');
    t.match(failed.body.error, field);
    t.same(Object.keys(failed.body).sort(), ['code', 'error'], 'the REST error shape');
  }

  // Four more from the same address over REST and MCP together make five; the sixth is refused.
  for (let i = 0; i < 3; i += 1) {
    const ok = await api('POST', '/api/v1/agent/register', { body: { agentId: `rest${i}` }, headers: { 'x-forwarded-for': '198.51.100.7' } });
    t.equal(ok.status, 201);
  }
  t.equal((await callTool(client, 'register_agent', { agentId: 'fifth' })).isError, false);
  const sixth = await callTool(client, 'register_agent', { agentId: 'sixth' });
  t.equal(sixth.isError, true);
  t.equal(sixth.body.code, 'rate_limited');
  const rest = await api('POST', '/api/v1/agent/register', { body: { agentId: 'rest' }, headers: { 'x-forwarded-for': '198.51.100.7' } });
  t.equal(rest.status, 429, 'REST shares the count');
  // Four invalid calls and one valid one from the other address: the next is refused.
  t.equal((await callTool(invalid, 'register_agent', { agentId: 'valid' })).isError, false);
  t.equal((await callTool(invalid, 'register_agent', { agentId: 'over' })).body.code, 'rate_limited', 'invalid calls counted');
});

t.test('register_agent tells clients not to retry it automatically', async (t) => {
  const { baseUrl } = await startApp(t);
  const client = await mcpClient(t, baseUrl);
  const { tools } = await client.listTools();
  const register = tools.find((tool) => tool.name === 'register_agent');
  t.match(register?.description, /Do not retry automatically/);
  t.match(register?.description, /5 requests per client IP per hour, failed ones included/);
});

t.test('register_agent counts the socket address unless http.trustProxy', async (t) => {
  const { baseUrl } = await startApp(t, { http: { trustProxy: false } });
  for (let i = 0; i < 5; i += 1) {
    const client = await mcpClient(t, baseUrl, { headers: { 'x-forwarded-for': `203.0.113.${i}` } });
    t.equal((await callTool(client, 'register_agent', { agentId: `bot${i}` })).isError, false);
  }
  const client = await mcpClient(t, baseUrl, { headers: { 'x-forwarded-for': '203.0.113.99' } });
  const blocked = await callTool(client, 'register_agent', { agentId: 'bot6' });
  t.equal(blocked.body.code, 'rate_limited', 'X-Forwarded-For is ignored');
});

t.test('keyed tools: a missing key, a wrong key, a key in arguments or the URL are 401 results', async (t) => {
  const { baseUrl, register } = await startApp(t);
  const { apiKey } = await register();
  const anonymous = await mcpClient(t, baseUrl);
  const wrong = await mcpClient(t, baseUrl, { key: `svc_${'0'.repeat(64)}` });
  const inUrl = await mcpClient(t, baseUrl, { path: `/mcp?apiKey=${apiKey}&key=${apiKey}` });
  const calls: [string, Record<string, unknown>][] = [
    ['check_inbox', {}],
    ['get_email', { id: '1' }],
    ['check_balance', {}],
  ];
  for (const [name, args] of calls) {
    for (const [label, client] of [
      ['missing', anonymous],
      ['wrong', wrong],
      ['in URL', inUrl],
    ] as const) {
      const outcome = await callTool(client, name, args);
      t.equal(outcome.isError, true, `${name}, key ${label}`);
      t.same(outcome.body, { error: 'missing or invalid API key', code: 'unauthorized' });
    }
    const inArguments = await callTool(anonymous, name, { ...args, apiKey });
    t.equal(inArguments.body.code, 'unauthorized', `${name}: a key in arguments is not accepted`);
  }
  const malformed = await callTool(anonymous, 'check_inbox', { limit: 0 });
  t.equal(malformed.body.code, 'unauthorized', 'as in REST, the key is checked before the arguments');
});

t.test('check_inbox, get_email and check_balance answer what REST answers, on both paths', async (t) => {
  const { baseUrl, api, register, smtpPort } = await startApp(t);
  const { apiKey, email } = await register();
  await smtpSend(smtpPort, { from: 'Ada <ada@example.org>', to: email, subject: 'First', text: 'one' });
  await smtpSend(smtpPort, { from: 'ada@example.org', to: email, subject: 'Second note', text: 'two' });
  for (const path of ['/mcp', '/api/mcp']) {
    const client = await mcpClient(t, baseUrl, { key: apiKey, path });
    const inbox = await callTool(client, 'check_inbox', {});
    t.equal(inbox.isError, false, path);
    t.same(inbox.body, (await api('GET', '/api/v1/agent/inbox', { key: apiKey })).body, `${path} check_inbox equals REST`);
    t.same(
      inbox.body.emails.map((message: any) => message.subject),
      ['Second note', 'First'],
    );

    const page = await callTool(client, 'check_inbox', { limit: 1, offset: 1, search: 'first' });
    t.same(page.body, (await api('GET', '/api/v1/agent/inbox?limit=1&offset=1&search=first', { key: apiKey })).body);

    const id = inbox.body.emails[1].id;
    const read = await callTool(client, 'get_email', { id, markAsRead: false });
    t.equal(read.isError, false);
    t.same(read.body, (await api('GET', `/api/v1/agent/email/${id}?markAsRead=false`, { key: apiKey })).body, `${path} get_email equals REST`);
    t.equal(read.body.text.trim(), 'one');

    const balance = await callTool(client, 'check_balance');
    t.same(balance.body, (await api('GET', '/api/v1/agent/balance', { key: apiKey })).body, `${path} check_balance equals REST`);
  }
  const client = await mcpClient(t, baseUrl, { key: apiKey });
  const first = (await callTool(client, 'check_inbox')).body.emails[1];
  t.equal(first.isRead, false);
  await callTool(client, 'get_email', { id: first.id });
  t.equal((await callTool(client, 'check_inbox')).body.emails[1].isRead, true, 'a full key marks read by default, as REST');
});

t.test('keyed tools report failures as isError results with the REST {error, code}', async (t) => {
  const { baseUrl, register, smtpPort } = await startApp(t, { limits: { readMaxBytes: 2000 } });
  const { apiKey, email } = await register();
  await smtpSend(smtpPort, { from: 'ada@example.org', to: email, subject: 'big', text: 'x'.repeat(5000) });
  const client = await mcpClient(t, baseUrl, { key: apiKey });
  const { uidValidity } = (await callTool(client, 'check_inbox')).body;
  const cases: [string, Record<string, unknown>, string, RegExp][] = [
    ['check_inbox', { limit: 0 }, 'invalid_input', /limit/],
    ['check_inbox', { limit: '5.5' }, 'invalid_input', /limit/],
    ['check_inbox', { limit: 'five' }, 'invalid_input', /limit/],
    ['check_inbox', { search: 's'.repeat(201) }, 'invalid_input', /search/],
    ['check_inbox', { folder: 'Nope' }, 'not_found', /Nope/],
    ['check_inbox', { unknown: true }, 'invalid_input', /unknown/],
    ['get_email', {}, 'invalid_input', /id/],
    ['get_email', { id: 0 }, 'invalid_input', /id/],
    ['get_email', { id: 1.5 }, 'invalid_input', /id/],
    ['get_email', { id: '99' }, 'not_found', /99/],
    ['get_email', { id: '1', uidValidity: String(Number(uidValidity) + 1) }, 'conflict', /uidValidity/],
    ['get_email', { id: '1' }, 'too_large', /IMAP/],
    ['check_balance', { extra: 1 }, 'invalid_input', /extra/],
  ];
  for (const [name, args, code, message] of cases) {
    const outcome = await callTool(client, name, args);
    t.equal(outcome.isError, true, `${name} ${JSON.stringify(args)}`);
    t.equal(outcome.body.code, code, `${name} ${JSON.stringify(args)}`);
    t.match(outcome.body.error, message);
  }
  const raw = await rawMcp(
    baseUrl,
    { jsonrpc: '2.0', id: 9, method: 'tools/call', params: { name: 'get_email', arguments: { id: '99' } } },
    {
      'mcp-protocol-version': PROTOCOL,
      authorization: `Bearer ${apiKey}`,
    },
  );
  t.equal(raw.status, 200, 'a tool failure is HTTP 200');
  t.equal(raw.body.result.isError, true);
});

t.test('a foreign browser Origin answers 403 (MCP transport security: DNS rebinding)', async (t) => {
  const { baseUrl } = await startApp(t);
  const { port } = new URL(baseUrl);
  const cases: [Record<string, string>, number, string][] = [
    [{ origin: 'http://evil.example' }, 403, 'a foreign origin'],
    [{ origin: `http://evil.example:${port}`, host: `evil.example:${port}` }, 403, 'a rebound name, even when Host agrees'],
    [{ origin: 'null' }, 403, 'an opaque origin'],
    [{ origin: new URL(baseUrl).origin }, 200, 'our own origin'],
    [{ origin: `http://localhost:${port}`, host: `localhost:${port}` }, 200, 'a loopback page of this listener'],
    [{ origin: `http://localhost:${port}` }, 403, 'a loopback origin that is not this Host'],
    [{}, 200, 'no Origin: not a browser'],
  ];
  for (const [headers, status, label] of cases) {
    const response = await nodeMcpPost(
      baseUrl,
      { jsonrpc: '2.0', id: 1, method: 'tools/list' },
      {
        accept: 'application/json, text/event-stream',
        'mcp-protocol-version': PROTOCOL,
        ...headers,
      },
    );
    t.equal(response.status, status, label);
    if (status === 403) t.equal(JSON.parse(response.text).error.code, -32000);
  }
});
