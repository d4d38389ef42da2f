import t from 'tap';
import { startApp } from './helpers/app.js';
import { funded } from './helpers/agents.js';
import { callTool, mcpClient, nodeMcpPost } from './helpers/mcp.js';
import { smtpSend } from './helpers/smtp.js';

const PROTOCOL = '2025-11-25';
const LIST = { jsonrpc: '2.0', id: 1, method: 'tools/list' };

t.test('any Accept that admits JSON is served; one that excludes JSON answers 406', async (t) => {
  const { baseUrl } = await startApp(t);
  const cases: [Record<string, string>, number, string][] = [
    [{}, 200, 'no Accept at all'],
    [{ accept: 'application/json' }, 200, 'application/json alone'],
    [{ accept: '*/*' }, 200, '*/*'],
    [{ accept: 'application/*;q=0.5' }, 200, 'application/*'],
    [{ accept: 'text/event-stream, application/json' }, 200, 'both, in the other order'],
    [{ accept: 'text/html' }, 406, 'HTML only'],
    [{ accept: 'text/event-stream' }, 406, 'SSE only: this server never streams'],
    [{ accept: 'application/json;q=0, */*' }, 406, 'JSON refused with q=0 (RFC 9110 section 12.5.1)'],
  ];
  for (const [headers, status, label] of cases) {
    const response = await nodeMcpPost(baseUrl, LIST, { 'mcp-protocol-version': PROTOCOL, ...headers });
    t.equal(response.status, status, label);
    const body = JSON.parse(response.text);
    if (status === 200) t.equal(body.result.tools.length, 10, `${label}: the tool list (the five of docs/agents/mcp.md, four for conversations, mark_junk)`);
    else t.match(body.error, { code: -32000, message: /application\/json/ }, `${label}: says what is served`);
  }
});

t.test('tool arguments: a number for a numeric string and a numeric string for an integer', async (t) => {
  const app = await startApp(t);
  const { apiKey, email } = await app.register();
  await smtpSend(app.smtpPort, { from: 'ada@example.org', to: email, subject: 'One', text: 'one' });
  await smtpSend(app.smtpPort, { from: 'ada@example.org', to: email, subject: 'Two', text: 'two' });
  const client = await mcpClient(t, baseUrl(app), { key: apiKey });
  const inbox = await callTool(client, 'check_inbox', {});

  const read = await callTool(client, 'get_email', { id: 1, markAsRead: false, uidValidity: Number(inbox.body.uidValidity) });
  t.equal(read.isError, false, 'get_email {id: 1} as the Inspector sends it');
  t.equal(read.body.subject, 'One');
  const page = await callTool(client, 'check_inbox', { limit: '1', offset: '1' });
  t.equal(page.isError, false, 'check_inbox {limit: "1"}');
  t.same(
    page.body.emails.map((message: any) => message.subject),
    ['One'],
  );

  const cases: [string, Record<string, unknown>, RegExp][] = [
    ['get_email', { id: 0 }, /^id must match pattern/],
    ['get_email', { id: -3 }, /^id must match pattern/],
    ['get_email', { id: true }, /^id must be a string$/],
    ['check_inbox', { limit: '1e2' }, /^limit must be an integer$/],
    ['check_inbox', { limit: '500' }, /^limit must be at most 100$/],
    ['check_inbox', { search: 5 }, /^search must be a string$/],
  ];
  for (const [name, args, message] of cases) {
    const outcome = await callTool(client, name, args);
    t.equal(outcome.isError, true, `${name} ${JSON.stringify(args)}`);
    t.match(outcome.body, { code: 'invalid_input', error: message }, `${name} ${JSON.stringify(args)}: ${outcome.body.error}`);
  }
  const rest = await app.api('POST', '/api/v1/agent/send', { key: apiKey, body: { to: 'a@example.com', subject: 5, text: 'x' } });
  t.match(rest.body, { code: 'invalid_input', error: 'subject must be a string' }, 'REST bodies stay strict');
});

t.test('validation messages name the rule that failed, in MCP as in REST', async (t) => {
  const app = await startApp(t);
  const agent = await funded(app, 100);
  const client = await mcpClient(t, baseUrl(app), { key: agent.apiKey });
  const ok = { to: 'a@example.com', subject: 's', text: 'x' };
  const many = Array.from({ length: 51 }, (_, i) => `r${i}@example.com`);
  const cases: [Record<string, unknown>, string][] = [
    [{ ...ok, to: many }, 'to has too many items: at most 50'],
    [{ ...ok, to: [] }, 'to must not be an empty list'],
    [{ ...ok, to: '' }, 'to must not be empty'],
    [{ ...ok, to: 7 }, 'to must be a string or an array'],
    [{ ...ok, cc: ['b@example.com', 7] }, 'cc.1 must be a string'],
    [{ ...ok, from: { name: 'Ada' } }, 'from.email is required'],
    [{ ...ok, replyTo: many }, 'replyTo has too many items: at most 50'],
  ];
  for (const [args, message] of cases) {
    const outcome = await callTool(client, 'send_email', args);
    t.same(outcome.body, { error: message, code: 'invalid_input' }, `MCP: ${message}`);
    const rest = await app.api('POST', '/api/v1/agent/send', { key: agent.apiKey, body: args });
    t.equal(rest.status, 400);
    t.same(rest.body, { error: message, code: 'invalid_input' }, `REST: ${message}`);
  }
});

const baseUrl = (app: { baseUrl: string }): string => app.baseUrl;
