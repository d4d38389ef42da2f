// `npm run package` builds dist/agentpost; this runs a copy of it from an empty temp
// folder, far from any node_modules, with an empty environment: register over REST,
// receive over SMTP (parsed on a worker thread from the bundled asset), read over REST,
// admin commands, clean stop (issue 2, item 4).
import { chmodSync, copyFileSync, mkdirSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import t from 'tap';
import { startDnsServer } from './helpers/dns-server.js';
import { callTool, mcpClient } from './helpers/mcp.js';
import { restCall, runCommand, startServerProcess } from './helpers/process.js';
import { smtpSend, smtpSendRaw } from './helpers/smtp.js';

// Building copies a 130 MB binary, the SEA steps are CPU-bound, and the first build compiles
// better-sqlite3 for Node 24 (kept in dist/addon afterwards): generous on a loaded machine.
t.setTimeout(1_200_000);

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const built = join(root, 'dist', 'agentpost');

t.test('npm run package builds dist/agentpost', async (t) => {
  const result = await runCommand(process.execPath, [join(root, 'scripts', 'package.mjs')], { cwd: root });
  t.equal(result.code, 0, result.stderr);
  t.match(result.stdout, /built dist\/agentpost: [\d.]+ MB in [\d.]+ s/);
});

t.test('the shipped addon survives statements finalized by GCs that start from I/O (Node 24 ObjectWrap hooks)', async (t) => {
  const { packagingNode, addonFor } = await import('../scripts/sea-runtime.mjs');
  const node = packagingNode();
  const addon = addonFor(node, root, () => {});
  const churn = join(root, 'test', 'fixtures', 'scripts', 'statement-churn.cjs');
  const database = join(root, 'node_modules', 'better-sqlite3', 'lib', 'database.js');
  // A 1 MB young generation makes V8 collect often, in whatever callback happens to allocate.
  const result = await runCommand(node.binary, ['--max-semi-space-size=1', churn, database, addon], { cwd: root });
  t.equal(result.code, 0, result.stderr.slice(-2000));
  t.match(result.stdout, /survived \d+ reads/);
});

t.test('the heap-trim addon loads in the packaging Node and trims (native/heap-trim.c)', async (t) => {
  const { packagingNode, heapTrimAddonFor } = await import('../scripts/sea-runtime.mjs');
  const node = packagingNode();
  const addon = heapTrimAddonFor(node, root);
  const script = `const m = { exports: {} }; process.dlopen(m, ${JSON.stringify(addon)}); process.stdout.write(typeof m.exports.trim());`;
  const result = await runCommand(node.binary, ['-e', script], { cwd: root });
  t.equal(result.code, 0, result.stderr);
  t.equal(result.stdout, 'boolean', 'trim() ran and answered whether pages went back');
});

t.test("dropping the executable's own file pages leaves the process working (native/heap-trim.c)", async (t) => {
  const { packagingNode, heapTrimAddonFor } = await import('../scripts/sea-runtime.mjs');
  const addon = heapTrimAddonFor(packagingNode(), root);
  // Node-API is stable across versions: the addon built for the executable's Node loads in this one.
  const probe = join(root, 'test', 'fixtures', 'native', 'drop-pages-probe.ts');
  const result = await runCommand(process.execPath, ['--import', 'tsx', probe, addon], { cwd: root });
  t.equal(result.code, 0, result.stderr);
  const { before, after, same, misaligned } = JSON.parse(result.stdout) as { before: number; after: number; same: boolean; misaligned: boolean };
  t.ok(same, 'hashing, deflate, regular expressions and ICU answer as before');
  t.ok(after < before / 2, `resident file pages ${before} -> ${after} kB`);
  t.equal(misaligned, false, 'a range not on a page boundary is refused');
});

t.test('the executable serves, receives and reads with nothing beside it', async (t) => {
  const home = mkdtempSync(join(tmpdir(), 'agentpost-sea-test-'));
  t.teardown(() => rmSync(home, { recursive: true, force: true }));
  const temp = join(home, 'tmp');
  const executable = join(home, 'agentpost');
  copyFileSync(built, executable);
  mkdirSync(temp);
  chmodSync(executable, 0o755);
  // Only TMPDIR: no PATH, no NODE_PATH, no node_modules anywhere above `home`.
  const env = { TMPDIR: temp };
  const run = (...args: string[]) => runCommand(executable, args, { cwd: home, env });

  const version = await run('--version');
  t.equal(version.code, 0, version.stderr);
  t.match(version.stdout, /^agentpost [\d.]+ \(node v24\.\d+\.\d+\)\n$/, 'the executable carries Node 24 (LTS), not the Node that built it');

  // One parse worker whatever the CPU count: the mail below is then parsed by the thread that
  // the executable evaluates from its parse-worker.js asset (the listening line comes after it is up).
  // The sender's SPF and DMARC come from a DNS server on loopback: mailauth judges the mail
  // inside the executable's authentication worker (off by default; turned on here to test its asset).
  const dns = await startDnsServer(t, { 'example.com': { TXT: ['v=spf1 ip4:127.0.0.1 -all'] }, '_dmarc.example.com': { TXT: ['v=DMARC1; p=reject'] } });
  const server = await startServerProcess(
    t,
    executable,
    [
      'serve',
      '--data-dir',
      'data',
      '--http-port',
      '0',
      '--smtp-port',
      '0',
      '--submission-port',
      '0',
      '--parse-threads',
      '1',
      '--dns-servers',
      dns.servers[0],
      '--owners-signup',
      'open',
      '--smtp-authentication-thread',
    ],
    { cwd: home, env },
  );
  t.ok(server.ports.http > 0 && server.ports.smtp > 0, 'port 0 bound free ports and logged them');
  t.match(server.output().stderr, /"message":"agentpost listening"[^\n]*"parseWorkers":1/, 'the parse worker started inside the executable');
  t.match(
    server.output().stderr,
    /"message":"agentpost listening"[^\n]*"authenticationWorker":true/,
    'and the authentication worker, from its auth-worker.js asset',
  );
  t.match(
    server.output().stderr,
    /"message":"agentpost listening"[^\n]*"searchWorker":true/,
    'so did the search worker, with the addon the main thread loaded',
  );
  t.same(readdirSync(temp), [], 'the native addon was loaded from a temp file that is gone again');

  const health = await restCall(server.baseUrl, 'GET', '/healthz');
  t.same(health, { status: 200, body: { status: 'ok' } });
  const openapi = await restCall(server.baseUrl, 'GET', '/api/v1/openapi.json');
  t.equal(openapi.body.info.version, '2.1.0', 'bundled schema files are served');

  const registered = await restCall(server.baseUrl, 'POST', '/api/v1/agent/register', { body: { agentId: 'sea.smoke' } });
  t.equal(registered.status, 201);
  const { email, apiKey } = registered.body as { email: string; apiKey: string };

  await smtpSend(server.ports.smtp, {
    from: 'sender@example.com',
    to: email,
    subject: 'packaged hello',
    text: 'plain part',
    html: '<p>html part</p>',
    attachments: [{ filename: 'data.bin', content: Buffer.from([0, 1, 2, 255]) }],
  });
  // A KOI8-R body and encoded-word subject: mailparser's iconv tables must be in the bundle.
  const koi8 = Buffer.concat([
    Buffer.from(
      `From: sender@example.com\r\nTo: ${email}\r\nSubject: =?KOI8-R?B?8NLJ18XU?=\r\n` +
        'MIME-Version: 1.0\r\nContent-Type: text/plain; charset=KOI8-R\r\nContent-Transfer-Encoding: 8bit\r\n\r\n',
    ),
    Buffer.from([0xf0, 0xd2, 0xc9, 0xd7, 0xc5, 0xd4, 0x0d, 0x0a]),
  ]);
  await smtpSendRaw(server.ports.smtp, 'sender@example.com', [email], koi8);

  const inbox = await restCall(server.baseUrl, 'GET', '/api/v1/agent/inbox', { key: apiKey });
  t.equal(inbox.status, 200);
  t.equal(inbox.body.totalMessages, 2);
  t.same(
    inbox.body.emails.map((item: any) => item.subject),
    ['Привет', 'packaged hello'],
    'newest first',
  );

  const first = inbox.body.emails[1];
  const read = await restCall(server.baseUrl, 'GET', `/api/v1/agent/email/${first.id}`, { key: apiKey });
  t.equal(read.status, 200);
  t.match(read.body, { subject: 'packaged hello', text: /plain part/, html: /<p>html part<\/p>/, isRead: true });
  t.match(read.body, { trust: 'verified', authentication: { spf: 'pass', dmarc: 'pass' } }, 'judged by the bundled mailauth');
  t.equal(read.body.attachments[0].content, Buffer.from([0, 1, 2, 255]).toString('base64'));
  const cyrillic = await restCall(server.baseUrl, 'GET', `/api/v1/agent/email/${inbox.body.emails[0].id}`, { key: apiKey });
  t.match(cyrillic.body.text, /Привет/);

  const search = await restCall(server.baseUrl, 'GET', '/api/v1/agent/inbox?search=packag', { key: apiKey });
  t.same(
    search.body.emails.map((item: any) => item.subject),
    ['packaged hello'],
    'full-text search works',
  );
  const balance = await restCall(server.baseUrl, 'GET', '/api/v1/agent/balance', { key: apiKey });
  t.equal(balance.body.credits, 0);

  // Owner passwords: argon2's addon loaded from its asset.
  const owner = { email: 'sea.owner@example.com', password: 'packaged password' };
  t.equal((await restCall(server.baseUrl, 'POST', '/api/user/signup', { body: owner })).status, 200);
  const signedIn = await restCall(server.baseUrl, 'POST', '/api/user/session', { body: owner });
  t.equal(signedIn.status, 200, 'argon2 hashed and verified the password inside the executable');
  t.equal((await restCall(server.baseUrl, 'GET', '/api/user/me', { key: signedIn.body.token })).body.email, owner.email);

  const stopped = await server.stop('SIGTERM');
  t.equal(stopped.code, 0, 'clean exit on SIGTERM');
  if (stopped.code !== 0) t.comment(stopped.stderr);
  t.equal(stopped.signal, null);

  const credits = await run('credits', 'add', email, '7', '--data-dir', 'data');
  t.equal(credits.code, 0, credits.stderr);
  t.equal(credits.stdout, '7\n');
  const accounts = await run('accounts', 'list', '--data-dir', 'data');
  t.equal(accounts.code, 0, accounts.stderr);
  const listed = accounts.stdout
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line));
  t.match(
    listed.find((account) => account.email === email),
    { email, credits: 7, agentId: 'sea.smoke', kind: 'agent' },
  );
  t.match(
    listed.find((account) => account.kind === 'human'),
    { agentId: 'sea.owner@example.com' },
    'the owner is a human account',
  );
  t.same(readdirSync(temp), [], 'no temp files left behind');
});

t.test('the executable serves MCP over HTTP and runs the stdio bridge (issue 5)', async (t) => {
  const home = mkdtempSync(join(tmpdir(), 'agentpost-sea-mcp-'));
  t.teardown(() => rmSync(home, { recursive: true, force: true }));
  const executable = join(home, 'agentpost');
  copyFileSync(built, executable);
  chmodSync(executable, 0o755);
  mkdirSync(join(home, 'tmp'));
  const env = { TMPDIR: join(home, 'tmp') };
  const server = await startServerProcess(t, executable, ['serve', '--data-dir', 'data', '--http-port', '0', '--smtp-port', '0', '--submission-port', '0'], {
    cwd: home,
    env,
  });

  const http = await mcpClient(t, server.baseUrl);
  const registered = await callTool(http, 'register_agent', { agentId: 'sea.mcp' });
  t.equal(registered.isError, false);
  const { apiKey, email } = registered.body as { apiKey: string; email: string };

  const transport = new StdioClientTransport({
    command: executable,
    args: ['mcp', '--url', server.baseUrl],
    env: { ...env, AGENTPOST_API_KEY: apiKey },
    cwd: home,
    stderr: 'pipe',
  });
  let bridgeStderr = '';
  transport.stderr?.on('data', (chunk: Buffer) => (bridgeStderr += chunk.toString()));
  const bridge = new Client({ name: 'sea-desktop', version: '1.0.0' });
  await bridge.connect(transport);
  t.teardown(() => bridge.close());
  t.same((await bridge.listTools()).tools, (await http.listTools()).tools, 'the same tools through the bridge');
  t.same((await callTool(bridge, 'check_balance')).body, { credits: 0, email, accountStatus: 'active' });
  await bridge.close();
  t.notMatch(bridgeStderr, apiKey, 'the bridge never prints the key');

  const stopped = await server.stop('SIGTERM');
  t.equal(stopped.code, 0, 'clean exit on SIGTERM');
});
