// Request bodies: a small limit before authentication (register, MCP without a key that may
// send, webhooks), the large one only for an authenticated send, and one budget for the bytes
// held at once across requests (503 past it).
import t from 'tap';
import { startApp } from './helpers/app.js';
import { funded } from './helpers/agents.js';
import { issueAccessKey } from './helpers/keys.js';
import { callTool, mcpClient } from './helpers/mcp.js';
import { assertMatchesOpenApi } from './helpers/openapi.js';
import { jsonOfSize, upload } from './helpers/upload.js';

const MCP_HEADERS = { accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-11-25' };
const mcpCall = (filler: string) => ({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'register_agent', arguments: { agentId: filler } } });

t.test('before authentication only small bodies are read: register, MCP, webhooks', async (t) => {
  const app = await startApp(t);
  const agent = await funded(app, 5);
  const reader = await issueAccessKey(app, agent.apiKey, { name: 'r', kind: 'mail', permissions: ['mail:read'] });
  const big = (shape: (filler: string) => unknown) => jsonOfSize(20 * 1024, shape);
  const cases: [string, string, Buffer, Record<string, string>][] = [
    ['register', '/api/v1/agent/register', big((x) => ({ agentId: x })), {}],
    ['MCP without a key', '/mcp', big(mcpCall), MCP_HEADERS],
    ['MCP with a read-only key', '/mcp', big(mcpCall), { ...MCP_HEADERS, authorization: `Bearer ${reader.apiKey}` }],
    [
      'send with a read-only key',
      '/api/v1/agent/send',
      big((x) => ({ to: 'a@example.com', subject: 's', text: x })),
      { authorization: `Bearer ${reader.apiKey}` },
    ],
    ['webhook create', '/api/v1/agent/webhooks', big((x) => ({ url: `https://hooks.example.com/${x}` })), { authorization: `Bearer ${agent.apiKey}` }],
  ];
  for (const [name, path, body, headers] of cases) {
    for (const chunked of [false, true]) {
      const answer = await upload(app.baseUrl + path, { body, chunked, headers }).result;
      t.equal(answer.status, 413, `${name}${chunked ? ' (chunked)' : ''}`);
      if (path !== '/mcp') assertMatchesOpenApi('POST', path, answer.status, JSON.parse(answer.text));
      else t.match(JSON.parse(answer.text), { jsonrpc: '2.0', error: { code: -32000, message: /Payload Too Large/ } });
    }
  }
  t.equal((await app.api('POST', '/api/v1/agent/register', { body: { agentId: 'small' } })).status, 201, 'a small one still works');
});

t.test('a key that may send gets the large limit over REST and MCP', async (t) => {
  const app = await startApp(t);
  const agent = await funded(app, 5);
  const attachment = Buffer.alloc(3 * 1024 * 1024, 7).toString('base64');
  const rest = await app.api('POST', '/api/v1/agent/send', {
    key: agent.apiKey,
    body: { to: agent.email, subject: 'big', text: 'x', attachments: [{ filename: 'a.bin', content: attachment, encoding: 'base64' }] },
  });
  t.equal(rest.status, 200);
  const client = await mcpClient(t, app.baseUrl, { key: agent.apiKey });
  const sent = await callTool(client, 'send_email', {
    to: agent.email,
    subject: 'big',
    text: 'x',
    attachments: [{ filename: 'a.bin', content: attachment, encoding: 'base64' }],
  });
  t.equal(sent.isError, false, 'MCP send_email with a 4 MB body');
});

t.test('bytes held at once across requests are capped: 503 with Retry-After, then free again', async (t) => {
  const app = await startApp(t, { http: { maxBodyBytes: 64 * 1024, maxSmallBodyBytes: 32 * 1024, maxBufferedBodyBytes: 64 * 1024 } });
  const agent = await funded(app, 5);
  const send = jsonOfSize(40 * 1024, (x) => ({ to: agent.email, subject: 's', text: x }));
  const auth = { authorization: `Bearer ${agent.apiKey}` };
  const held = upload(`${app.baseUrl}/api/v1/agent/send`, { body: send, chunked: true, headers: auth, hold: 39 * 1024 });
  // Until the held upload's 39 KB (of the 64 KB budget) have reached the server.
  while (app.app.bodyBudget.heldBytes < 39 * 1024) await new Promise((resolve) => setTimeout(resolve, 10));
  const declared = await upload(`${app.baseUrl}/api/v1/agent/send`, { body: send, headers: auth }).result;
  t.equal(declared.status, 503, 'a declared 40 KB does not fit beside it');
  t.equal(declared.headers['retry-after'], '1');
  assertMatchesOpenApi('POST', '/api/v1/agent/send', 503, JSON.parse(declared.text));
  const streamed = await upload(`${app.baseUrl}/api/v1/agent/register`, { body: jsonOfSize(30 * 1024, (x) => ({ agentId: x })), chunked: true }).result;
  t.equal(streamed.status, 503, 'a chunked body is refused when it would pass the budget');
  const mcp = await upload(`${app.baseUrl}/mcp`, { body: jsonOfSize(30 * 1024, mcpCall), headers: { ...MCP_HEADERS, ...auth } }).result;
  t.equal(mcp.status, 503, 'MCP shares the budget');
  t.match(JSON.parse(mcp.text), { jsonrpc: '2.0', error: { code: -32000 } });
  held.finish();
  t.equal((await held.result).status, 200, 'the held one completes');
  t.equal((await upload(`${app.baseUrl}/api/v1/agent/send`, { body: send, headers: auth }).result).status, 200, 'its bytes were given back');
  t.equal(
    (await upload(`${app.baseUrl}/api/v1/agent/send`, { body: send, headers: auth }).result).status,
    200,
    'and every finished request gives back its own',
  );
  await app.api('GET', '/healthz');
  t.equal(app.app.bodyBudget.heldBytes, 0, 'nothing is held once the responses ended');
});
