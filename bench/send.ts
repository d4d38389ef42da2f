// npm run bench:send: sends through REST and relays every remote recipient to a loopback
// SMTP sink (relay mode). Prints accepted sends/s and delivered recipients/s. When Postfix is
// installed, the same load (same messages, same recipients, same client concurrency) is
// submitted to a private Postfix instance relaying to the same sink, and the ratio printed.
// Everything shares this machine (2 cores), so the figures include that contention.
import { execFileSync, spawn } from 'node:child_process';
import { chmodSync, chownSync, copyFileSync, existsSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { createServer, Socket, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import nodemailer from 'nodemailer';
import { SMTPServer } from 'smtp-server';

const SENDS = Number(process.env.BENCH_SENDS ?? 1000);
const RECIPIENTS_PER_SEND = Number(process.env.BENCH_RECIPIENTS ?? 2);
const CLIENTS = Number(process.env.BENCH_CLIENTS ?? 16);
const TOTAL_RECIPIENTS = SENDS * RECIPIENTS_PER_SEND;
const TEXT = 'Hello from the agentpost send benchmark.\n'.repeat(20);

/** The remote MTA: accepts everything, counts recipients, keeps nothing. */
const startSink = async () => {
  let received = 0;
  let waiter: { count: number; resolve: () => void } | null = null;
  const server = new SMTPServer({
    authOptional: true, disabledCommands: ['STARTTLS', 'AUTH'], disableReverseLookup: true, logger: false, maxClients: 1000,
    onData(stream, session, callback) {
      stream.on('data', () => {});
      stream.on('end', () => {
        received += session.envelope.rcptTo.length;
        if (waiter && received >= waiter.count) waiter.resolve();
        callback(null, 'ok');
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  return {
    port: (server.server.address() as AddressInfo).port,
    get received() { return received; },
    reset() { received = 0; },
    waitFor: (count: number) => new Promise<void>((resolve) => {
      if (received >= count) return resolve();
      waiter = { count, resolve };
    }),
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
};

const recipientsOf = (i: number): string[] =>
  Array.from({ length: RECIPIENTS_PER_SEND }, (_, r) => `user${i}-${r}@domain${r}.bench.test`);

/** Runs `work(i)` for i in [0, total) with `concurrency` in flight. */
const pool = async (total: number, concurrency: number, work: (i: number) => Promise<void>) => {
  let next = 0;
  await Promise.all(Array.from({ length: concurrency }, async () => {
    while (next < total) await work(next++);
  }));
};

/**
 * agentpost runs as its own process (`agentpost serve`), as Postfix does, so the client and
 * the sink in this process do not share its event loop.
 */
const benchAgentpost = async (relayPort: number, sink: Awaited<ReturnType<typeof startSink>>) => {
  const dataDir = mkdtempSync(join(tmpdir(), 'agentpost-bench-send-'));
  const unlimited = { recipientsPerDay: 10_000_000, recipientsPerMinute: 10_000_000 };
  const [httpPort, smtpPort, submissionPort] = [await freePort(), await freePort(), await freePort()];
  const configFile = join(dataDir, 'config.json');
  writeFileSync(configFile, JSON.stringify({
    dataDir, http: { port: httpPort }, smtp: { port: smtpPort }, submission: { port: submissionPort }, log: { level: 'warn' },
    limits: { sendRequestsPerMinute: 10_000_000, sendingStates: { probation: unlimited, standard: unlimited, reviewed: unlimited } },
    outbound: { relay: `smtp://127.0.0.1:${relayPort}` },
  }));
  const cli = (...args: string[]) => execFileSync(process.execPath, ['--import', 'tsx', 'bin/main.ts', ...args, '--config', configFile], { stdio: 'pipe' });
  const server = spawn(process.execPath, ['--import', 'tsx', 'bin/main.ts', 'serve', '--config', configFile], { stdio: ['ignore', 'ignore', 'inherit'] });
  const baseUrl = `http://127.0.0.1:${httpPort}`;
  try {
    await waitForPort(httpPort);
    const register = await fetch(`${baseUrl}/api/v1/agent/register`, {
      method: 'POST', headers: { 'content-type': 'application/json', 'user-agent': 'agentpost-bench/1.0' }, body: JSON.stringify({ agentId: 'bench' }),
    });
    const agent = (await register.json()) as { email: string; apiKey: string };
    cli('credits', 'add', agent.email, String(TOTAL_RECIPIENTS));
    cli('sending', 'set', agent.email, 'reviewed');
    sink.reset();
    const started = performance.now();
    await pool(SENDS, CLIENTS, async (i) => {
      const response = await fetch(`${baseUrl}/api/v1/agent/send`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'user-agent': 'agentpost-bench/1.0', authorization: `Bearer ${agent.apiKey}` },
        body: JSON.stringify({ to: recipientsOf(i), subject: `bench ${i}`, text: TEXT }),
      });
      if (response.status !== 200) throw new Error(`send ${i}: ${response.status} ${await response.text()}`);
      await response.arrayBuffer();
    });
    const acceptedSeconds = (performance.now() - started) / 1000;
    await sink.waitFor(TOTAL_RECIPIENTS);
    const deliveredSeconds = (performance.now() - started) / 1000;
    return { acceptedSeconds, deliveredSeconds };
  } finally {
    // A server that already died (a port taken at start) emits no second 'exit': waiting for one hung the run.
    const exited = server.exitCode !== null || server.signalCode !== null;
    if (!exited) {
      server.kill('SIGTERM');
      await new Promise((resolve) => server.once('exit', resolve));
    }
    rmSync(dataDir, { recursive: true, force: true });
  }
};

/**
 * A private Postfix instance (own config, queue and log under a temp folder, loopback only)
 * relaying everything to the sink. Needs root, as Postfix does; the system instance is untouched.
 */
const startPostfix = async (sinkPort: number) => {
  const root = mkdtempSync(join(tmpdir(), 'agentpost-bench-postfix-'));
  chmodSync(root, 0o755);
  const configDir = join(root, 'etc');
  for (const dir of ['etc', 'spool', 'lib']) mkdirSync(join(root, dir));
  chownSync(join(root, 'lib'), Number(execFileSync('id', ['-u', 'postfix']).toString().trim()), 0);
  copyFileSync('/etc/postfix/main.cf', join(configDir, 'main.cf'));
  copyFileSync('/etc/postfix/master.cf', join(configDir, 'master.cf'));
  const port = await freePort();
  const postconf = (...args: string[]) => execFileSync('postconf', ['-c', configDir, ...args], { stdio: 'pipe' });
  postconf('-e',
    `queue_directory=${join(root, 'spool')}`, `data_directory=${join(root, 'lib')}`, 'inet_interfaces=127.0.0.1', 'inet_protocols=ipv4',
    'mydestination=', `relayhost=[127.0.0.1]:${sinkPort}`, 'mynetworks=127.0.0.0/8', 'smtpd_tls_security_level=none',
    'smtp_tls_security_level=none', `maillog_file_prefixes=${root}`, `maillog_file=${join(root, 'maillog')}`, 'myhostname=bench.localhost',
    'alias_maps=', 'alias_database=', 'local_recipient_maps=', 'smtpd_relay_restrictions=permit_mynetworks, reject');
  postconf('-F', '-e', '*/*/chroot = n');
  postconf('-M', '-X', 'smtp/inet');
  postconf('-M', '-e', `127.0.0.1:${port}/inet=127.0.0.1:${port} inet n - n - - smtpd`);
  execFileSync('postfix', ['-c', configDir, 'set-permissions'], { stdio: 'pipe' });
  execFileSync('postfix', ['-c', configDir, 'start'], { stdio: 'pipe' });
  await waitForPort(port);
  return { port, stop: () => { execFileSync('postfix', ['-c', configDir, 'stop'], { stdio: 'ignore' }); rmSync(root, { recursive: true, force: true }); } };
};

const benchPostfix = async (sink: Awaited<ReturnType<typeof startSink>>) => {
  const postfix = await startPostfix(sink.port);
  try {
    const transport = nodemailer.createTransport({ host: '127.0.0.1', port: postfix.port, pool: true, maxConnections: CLIENTS, maxMessages: Infinity, ignoreTLS: true });
    sink.reset();
    const started = performance.now();
    await pool(SENDS, CLIENTS, async (i) => {
      await transport.sendMail({ from: 'bench@agents.localhost', to: recipientsOf(i), subject: `bench ${i}`, text: TEXT });
    });
    const acceptedSeconds = (performance.now() - started) / 1000;
    await sink.waitFor(TOTAL_RECIPIENTS);
    const deliveredSeconds = (performance.now() - started) / 1000;
    transport.close();
    return { acceptedSeconds, deliveredSeconds };
  } finally {
    postfix.stop();
  }
};

/** Ports handed out in this run: the kernel may offer a port again once its probe is closed. */
const handedOut = new Set<number>();

/** A port nothing listens on, never one already handed out (the server would die of EADDRINUSE and the run hang). */
const freePort = async (): Promise<number> => {
  for (;;) {
    const port = await new Promise<number>((resolve) => {
      const server = createServer();
      server.listen(0, '127.0.0.1', () => {
        const { port: probed } = server.address() as AddressInfo;
        server.close(() => resolve(probed));
      });
    });
    if (handedOut.has(port)) continue;
    handedOut.add(port);
    return port;
  }
};

const waitForPort = async (port: number) => {
  for (let i = 0; i < 100; i += 1) {
    const open = await new Promise<boolean>((resolve) => {
      const socket = new Socket();
      socket.once('connect', () => { socket.destroy(); resolve(true); });
      socket.once('error', () => resolve(false));
      socket.connect(port, '127.0.0.1');
    });
    if (open) return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`postfix did not listen on ${port}`);
};

const rate = (count: number, seconds: number) => (count / seconds).toFixed(0);

const sink = await startSink();
console.log(`bench:send: ${SENDS} sends x ${RECIPIENTS_PER_SEND} remote recipients, ${CLIENTS} concurrent clients, relay to a loopback sink`);
const ours = await benchAgentpost(sink.port, sink);
console.log(`agentpost: accepted ${rate(SENDS, ours.acceptedSeconds)} sends/s (${ours.acceptedSeconds.toFixed(2)} s); delivered ${rate(TOTAL_RECIPIENTS, ours.deliveredSeconds)} recipients/s (all ${TOTAL_RECIPIENTS} in ${ours.deliveredSeconds.toFixed(2)} s)`);
const postfixInstalled = existsSync('/etc/postfix/main.cf') && (() => {
  try { execFileSync('postconf', ['-d', 'mail_version'], { stdio: 'ignore' }); return true; } catch { return false; }
})();
if (!postfixInstalled) {
  console.log('postfix: not installed, no comparison (apt-get install postfix to compare)');
} else {
  const theirs = await benchPostfix(sink);
  console.log(`postfix:   accepted ${rate(SENDS, theirs.acceptedSeconds)} messages/s (${theirs.acceptedSeconds.toFixed(2)} s); delivered ${rate(TOTAL_RECIPIENTS, theirs.deliveredSeconds)} recipients/s (all in ${theirs.deliveredSeconds.toFixed(2)} s)`);
  console.log(`ratio (agentpost / postfix delivered recipients/s): ${(theirs.deliveredSeconds / ours.deliveredSeconds).toFixed(2)}`);
}
await sink.close();
