import { spawn } from 'node:child_process';
import { PassThrough } from 'node:stream';
import t, { type Test } from 'tap';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { ErrorCode } from '@modelcontextprotocol/sdk/types.js';
import { runCli } from '../bin/cli.js';
import { bridgeEndpoint } from '../src/mcp/bridge.js';
import { TOOLS } from '../src/mcp/tools.js';
import { startApp } from './helpers/app.js';
import { callTool, mcpClient } from './helpers/mcp.js';
import { freePort } from './helpers/ports.js';
import { smtpSend } from './helpers/smtp.js';

const AGENTPOST = new URL('../bin/agentpost', import.meta.url).pathname;

// Each bridge is a child process of its own: slow on a loaded machine.
t.setTimeout(600_000);

/** `agentpost mcp --url <base>` as a child process, driven by the SDK's stdio client. */
const bridgeClient = async (t: Test, url: string, apiKey?: string) => {
  const env: Record<string, string> = {};
  for (const [name, value] of Object.entries(process.env)) if (value !== undefined && name !== 'AGENTPOST_API_KEY') env[name] = value;
  if (apiKey) env.AGENTPOST_API_KEY = apiKey;
  const stderr = new PassThrough();
  let stderrText = '';
  stderr.on('data', (chunk: Buffer) => (stderrText += chunk.toString()));
  const transport = new StdioClientTransport({ command: AGENTPOST, args: ['mcp', '--url', url], env, stderr: 'pipe' });
  const client = new Client({ name: 'desktop-client', version: '1.0.0' });
  await client.connect(transport);
  transport.stderr?.pipe(stderr);
  t.teardown(() => client.close());
  return { client, stderr: () => stderrText };
};

t.test('bridgeEndpoint appends /mcp to a base URL and keeps an endpoint URL', async (t) => {
  t.equal(bridgeEndpoint('http://127.0.0.1:8080').href, 'http://127.0.0.1:8080/mcp');
  t.equal(bridgeEndpoint('http://h/base/').href, 'http://h/base/mcp');
  t.equal(bridgeEndpoint('http://h/api/mcp').href, 'http://h/api/mcp');
  t.throws(() => bridgeEndpoint('not a url'));
});

t.test('agentpost mcp: bad usage exits 2 and never echoes a key', async (t) => {
  const cases: [string[], RegExp][] = [
    [['mcp'], /usage: agentpost mcp --url/],
    [['mcp', '--url', 'not a url'], /is not a URL/],
    [['mcp', '--url', 'http://user:secret@127.0.0.1:9'], /no credentials in the URL/],
    [['mcp', '--url', 'http://127.0.0.1:9', '--api-key', 'svc_x'], /unknown option --api-key/],
    [['mcp', 'extra', '--url', 'http://127.0.0.1:9'], /unexpected argument "extra"/],
  ];
  for (const [args, message] of cases) {
    const { code, stderr } = await runCliCapturingStderr(args);
    t.equal(code, 2, args.join(' '));
    t.match(stderr, message);
    t.notMatch(stderr, /secret|svc_x/);
  }
});

/** In process: these exit before the bridge starts, so no child process is needed. */
const runCliCapturingStderr = async (args: string[]): Promise<{ code: number; stderr: string }> => {
  const write = process.stderr.write.bind(process.stderr);
  let stderr = '';
  process.stderr.write = ((chunk: string | Uint8Array) => {
    stderr += chunk.toString();
    return true;
  }) as typeof process.stderr.write;
  try {
    return { code: await runCli(args), stderr };
  } finally {
    process.stderr.write = write;
  }
};

t.test('the stdio bridge offers the same tools and forwards calls with the key', async (t) => {
  const { baseUrl, register, smtpPort } = await startApp(t);
  const { apiKey, email } = await register();
  await smtpSend(smtpPort, { from: 'ada@example.org', to: email, subject: 'via bridge', text: 'hello' });
  const { client, stderr } = await bridgeClient(t, baseUrl, apiKey);
  const direct = await mcpClient(t, baseUrl, { key: apiKey });

  t.equal(client.getServerVersion()?.name, 'agentpost');
  t.same((await client.listTools()).tools, (await direct.listTools()).tools, 'the same tools and schemas as over HTTP');

  const inbox = await callTool(client, 'check_inbox');
  t.equal(inbox.isError, false);
  t.same(inbox.body, (await callTool(direct, 'check_inbox')).body);
  const read = await callTool(client, 'get_email', { id: inbox.body.emails[0].id, markAsRead: false });
  t.equal(read.body.subject, 'via bridge');
  t.same((await callTool(client, 'check_balance')).body, { credits: 0, email, accountStatus: 'active' });

  const missing = await callTool(client, 'get_email', { id: '42' });
  t.equal(missing.isError, true);
  t.equal(missing.body.code, 'not_found');
  await t.rejects(client.callTool({ name: 'nope', arguments: {} }), { code: ErrorCode.InvalidParams }, 'JSON-RPC errors pass through');

  const registered = await callTool(client, 'register_agent', { agentId: 'desktop' });
  t.equal(registered.isError, false);
  t.not(registered.body.apiKey, apiKey);

  await client.close();
  t.match(stderr(), /MCP stdio bridge to http:\/\/.*\/mcp \(AGENTPOST_API_KEY set\)/);
  t.notMatch(stderr(), apiKey, 'the key is never printed');
  t.notMatch(stderr(), /svc_[0-9a-f]{64}/);
});

t.test('without AGENTPOST_API_KEY only register_agent works', async (t) => {
  const { baseUrl } = await startApp(t);
  const { client } = await bridgeClient(t, `${baseUrl}/api/mcp`);
  const balance = await callTool(client, 'check_balance');
  t.same(balance, { isError: true, body: { error: 'missing or invalid API key', code: 'unauthorized' } });
  t.equal((await callTool(client, 'register_agent', { agentId: 'anon' })).isError, false);
});

t.test('a piped caller that closes its input right away still gets every answer', async (t) => {
  const { baseUrl, register } = await startApp(t);
  const { apiKey, email } = await register();
  const lines = [
    { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'pipe', version: '1' } } },
    { jsonrpc: '2.0', method: 'notifications/initialized' },
    { jsonrpc: '2.0', id: 2, method: 'tools/call', params: { name: 'check_balance', arguments: {} } },
  ];
  const child = spawn(AGENTPOST, ['mcp', '--url', baseUrl], { env: { ...process.env, AGENTPOST_API_KEY: apiKey }, stdio: ['pipe', 'pipe', 'pipe'] });
  let stdout = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stdin.end(lines.map((line) => `${JSON.stringify(line)}\n`).join(''));
  const code = await new Promise((resolve) => child.once('close', resolve));
  t.equal(code, 0, 'exits when its input ends');
  const answers = stdout
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line));
  t.same(
    answers.map((answer) => answer.id),
    [1, 2],
  );
  t.same(JSON.parse(answers[1].result.content[0].text), { credits: 0, email, accountStatus: 'active' });
});

t.test('a service that is not up yet is reached on a later call', async (t) => {
  const port = await freePort();
  const { client } = await bridgeClient(t, `http://127.0.0.1:${port}`);
  await t.rejects(client.listTools(), { code: ErrorCode.InternalError }, 'nothing listens yet');
  await startApp(t, { http: { port } });
  t.equal((await client.listTools()).tools.length, TOOLS.length, 'connected once the service is up');
});
