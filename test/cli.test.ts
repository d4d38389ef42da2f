// bin/agentpost as a user runs it: exit codes, messages, config precedence end to end,
// port 0, /healthz, and the admin commands `credits add` and `accounts list`.
import { writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import t from 'tap';
import packageJson from '../package.json' with { type: 'json' };
import { restCall, runCommand, startServerProcess } from './helpers/process.js';

// Each case starts a process (bin/agentpost, the built dist/app): generous for a loaded 2-core machine.
t.setTimeout(900_000);

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const agentpost = join(root, 'bin', 'agentpost');

/** The test runner's environment without any AGENTPOST_* variable, plus the given ones. */
const envWith = (extra: Record<string, string> = {}): NodeJS.ProcessEnv => ({
  ...Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('AGENTPOST_'))),
  ...extra,
});

const cli = (args: string[], options: { cwd?: string; env?: Record<string, string> } = {}) =>
  runCommand(agentpost, args, { cwd: options.cwd, env: envWith(options.env) });

t.test('--help prints the usage with every option and its variable', async (t) => {
  const result = await cli(['--help']);
  t.equal(result.code, 0);
  for (const name of ['serve', 'credits add <email> <n>', 'accounts list', '--config', 'AGENTPOST_CONFIG', '--http-port', 'AGENTPOST_MAIL_DOMAIN']) {
    t.match(result.stdout, name);
  }
});

t.test('--version names the version and the Node.js it runs on', async (t) => {
  const result = await cli(['--version']);
  t.equal(result.code, 0, result.stderr);
  t.equal(result.stdout, `agentpost ${packageJson.version} (node ${process.version})\n`, 'bin/agentpost runs on the Node that runs npm');
});

t.test('an invalid setting stops with exit code 2 and names the setting', async (t) => {
  const dir = t.testdir({ 'bad.json': '{"http": {"port": 80,}}', 'unknown.json': '{"smtp": {"prot": 25}}' });
  const cases: [string, Parameters<typeof cli>[0], Record<string, string>, RegExp][] = [
    ['bad port flag', ['--http-port', 'eighty'], {}, /invalid setting http\.port \(from --http-port\)/],
    ['port out of range in the environment', [], { AGENTPOST_SMTP_PORT: '65536' }, /invalid setting smtp\.port \(from AGENTPOST_SMTP_PORT\): must be <= 65535/],
    ['unknown key in the file', ['--config', join(dir, 'unknown.json')], {}, /invalid setting smtp\.prot .*unknown setting/],
    ['bad JSON', [], { AGENTPOST_CONFIG: join(dir, 'bad.json') }, /invalid setting AGENTPOST_CONFIG: .*not valid JSON/],
    ['bad time zone', ['--time-zone', 'Atlantis/Capital'], {}, /invalid setting timeZone .*unknown time zone/],
    ['bad mail domain', [], { AGENTPOST_MAIL_DOMAIN: 'not a domain' }, /invalid setting mailDomain \(from AGENTPOST_MAIL_DOMAIN\)/],
    ['bad base URL', [], { AGENTPOST_BASE_URL: 'ftp://x' }, /invalid setting baseUrl/],
    ['unknown option', ['--htp-port', '0'], {}, /unknown option --htp-port/],
    ['unknown command', ['launch'], {}, /unknown command "launch"/],
  ];
  // Each case is its own process that only reads the folder: they run side by side (a process
  // spends part of its start waiting), and every one is still checked, in order.
  const results = await Promise.all(cases.map(([, args, env]) => cli(args, { cwd: dir, env })));
  cases.forEach(([name, , , message], i) => {
    t.equal(results[i].code, 2, name);
    t.match(results[i].stderr, message, name);
  });
});

t.test('serve: file < environment < flags, port 0 logged, /healthz, clean stop', async (t) => {
  const dir = t.testdir({});
  const file = join(dir, 'agentpost.json');
  writeFileSync(
    file,
    JSON.stringify({ mailDomain: 'file.example', dataDir: join(dir, 'file-data'), smtp: { port: 0 }, submission: { port: 0 }, http: { trustProxy: true } }),
  );
  const env = envWith({ AGENTPOST_CONFIG: file, AGENTPOST_MAIL_DOMAIN: 'env.example', AGENTPOST_HTTP_PORT: '0', AGENTPOST_DATA_DIR: join(dir, 'env-data') });
  const server = await startServerProcess(t, agentpost, ['serve', '--mail-domain', 'flag.example', '--data-dir', join(dir, 'flag-data')], { cwd: dir, env });
  t.ok(server.ports.http > 0, 'HTTP port 0 picked a free port and logged it');
  t.ok(server.ports.smtp > 0, 'SMTP port 0 from the file picked a free port and logged it');
  t.equal(server.baseUrl, `http://127.0.0.1:${server.ports.http}`);

  const health = await restCall(server.baseUrl, 'GET', '/healthz');
  t.same(health, { status: 200, body: { status: 'ok' } });
  const registered = await restCall(server.baseUrl, 'POST', '/api/v1/agent/register', { body: { agentId: 'cli' } });
  t.equal(registered.status, 201);
  t.match(registered.body.email, /@flag\.example$/, 'the flag beats the environment and the file');

  const stopped = await server.stop('SIGTERM');
  t.equal(stopped.code, 0, 'SIGTERM stops it cleanly');

  const email: string = registered.body.email;
  const admin = (args: string[]) => cli([...args, '--data-dir', join(dir, 'flag-data')], { cwd: dir });
  const first = await admin(['credits', 'add', email, '5']);
  t.same([first.code, first.stdout, first.stderr], [0, '5\n', ''], 'prints the new balance');
  const second = await admin(['credits', 'add', email.toUpperCase(), '3']);
  t.same([second.code, second.stdout], [0, '8\n'], 'addresses match case-insensitively');
  const list = await admin(['accounts', 'list']);
  t.equal(list.code, 0);
  const lines = list.stdout
    .trim()
    .split('\n')
    .map((line) => JSON.parse(line));
  t.equal(lines.length, 1);
  t.match(lines[0], { agentId: 'cli', email, credits: 8, status: 'active', sendingState: 'probation', createdAt: /^\d{4}-\d\d-\d\dT/ });

  // Commands that must all fail and change nothing run side by side; the balance read after
  // them all shows that none of them changed it.
  const amounts = ['five', '-1', '1.5', '0'];
  const [unknown, missingArgs, ...bads] = await Promise.all([
    admin(['credits', 'add', 'nobody@flag.example', '5']),
    admin(['credits', 'add', email]),
    ...amounts.map((amount) => admin(['credits', 'add', email, amount])),
  ]);
  t.equal(unknown.code, 1);
  t.match(unknown.stderr, /no account with the address nobody@flag\.example/);
  amounts.forEach((amount, i) => {
    t.equal(bads[i].code, 2, `amount ${amount}`);
    t.match(bads[i].stderr, /positive whole number/);
  });
  t.equal(missingArgs.code, 2);
  t.match(missingArgs.stderr, /usage: agentpost credits add <email> <n>/);
  const after = await admin(['accounts', 'list']);
  t.match(JSON.parse(after.stdout), { credits: 8 }, 'failed commands changed nothing');
});

t.test('admin commands refuse a data dir without a database', async (t) => {
  const dir = t.testdir({});
  const result = await cli(['accounts', 'list', '--data-dir', join(dir, 'typo')], { cwd: dir });
  t.equal(result.code, 1);
  t.match(result.stderr, /no database at .*typo/);
});

t.test('a port already in use is reported, not thrown', async (t) => {
  const dir = t.testdir({});
  const first = await startServerProcess(t, agentpost, ['--http-port', '0', '--smtp-port', '0', '--submission-port', '0', '--data-dir', join(dir, 'a')], {
    cwd: dir,
    env: envWith(),
  });
  const second = await cli(['--http-port', String(first.ports.http), '--smtp-port', '0', '--submission-port', '0', '--data-dir', join(dir, 'b')], { cwd: dir });
  t.equal(second.code, 1);
  t.match(second.stderr, new RegExp(`cannot listen on 127\\.0\\.0\\.1:${first.ports.http}: EADDRINUSE`));
  t.equal((await first.stop('SIGINT')).code, 0, 'SIGINT stops it cleanly too');
});
