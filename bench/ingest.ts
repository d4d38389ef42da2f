/**
 * `npm run bench:ingest`: 16 concurrent SMTP sessions send 4 KB messages to one mailbox.
 * Prints messages/s and server CPU ms per message for agentpost (durable: 250 only after a
 * synchronous=FULL commit) and, in the same run, for a bare smtp-server sink that stores
 * nothing, under the same client load. The server runs in a child process so its CPU is
 * measured apart from the client's. Options: --count N (measured messages per target,
 * default 4000), --sessions N (default 16), --bytes N (default 4096), --rounds N (default 1).
 * AGENTPOST_PARSE_THREADS=N sets the server's parse threads (smtp.parseThreads) for comparison.
 */
import { fork, type ChildProcess } from 'node:child_process';
import { connect, type Socket } from 'node:net';
import { loadavg } from 'node:os';
import { performance } from 'node:perf_hooks';
import nodemailer from 'nodemailer';
import type SMTPPool from 'nodemailer/lib/smtp-pool/index.js';
import { SMTPServer } from 'smtp-server';
import { loadConfig } from '../src/config/load.js';
import { createLogger } from '../src/core/logger.js';
import { createApp } from '../src/main.js';
import { sourceParseWorker } from '../src/workers/threads/parse-thread-source.js';
import { sourceSearchWorker } from '../src/workers/threads/search-thread-source.js';
import { argValue, fmt, messageOfSize, percentile, prng, tempDir, vocabulary } from './lib.js';

type Target = 'sink' | 'agentpost';

interface ServerReady { port: number; address: string }
interface ServerReport { cpu: NodeJS.CpuUsage; stored?: number }

// ---- child: one server, driven over IPC ----

/** Only the parse-thread setting comes from the environment; the rest is the bench's own. */
const parseThreadsEnv = () => ({ AGENTPOST_PARSE_THREADS: process.env.AGENTPOST_PARSE_THREADS });

const serveAgentpost = async (): Promise<{ ready: ServerReady; stored: () => number; stop: () => Promise<void> }> => {
  const dir = tempDir('agentpost-bench-ingest-');
  const config = loadConfig({ env: parseThreadsEnv(), overrides: { dataDir: dir.path, http: { port: 0 }, smtp: { port: 0 }, submission: { port: 0 }, imap: { port: 0 }, log: { level: 'silent' } } });
  const app = createApp(config, { logger: createLogger('silent', () => {}), parseWorker: sourceParseWorker, searchWorker: sourceSearchWorker });
  const ports = await app.start();
  const agent = app.services.accounts.register({ agentId: 'bench' }, '127.0.0.1');
  const mailbox = app.services.mailbox.mailboxForAddress(agent.email);
  if (!mailbox) throw new Error('no mailbox');
  return {
    ready: { port: ports.smtp, address: agent.email },
    stored: () => app.services.mailbox.folder(mailbox.id, 'INBOX').messageCount,
    stop: async () => {
      await app.stop();
      dir.remove();
    },
  };
};

/** The same smtp-server options as our MX, reading each message fully, storing nothing. */
const serveSink = async (): Promise<{ ready: ServerReady; stored: () => number; stop: () => Promise<void> }> => {
  let received = 0;
  const server = new SMTPServer({
    banner: 'sink', size: 25 * 1024 * 1024, authOptional: true, disabledCommands: ['AUTH', 'STARTTLS'],
    disableReverseLookup: true, logger: false,
    onRcptTo: (_address, _session, callback) => callback(),
    onData: (stream, _session, callback) => {
      const chunks: Buffer[] = [];
      stream.on('data', (chunk: Buffer) => chunks.push(chunk));
      stream.on('end', () => {
        Buffer.concat(chunks);
        received += 1;
        callback(null, 'Ok');
      });
    },
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.server.address() as { port: number }).port;
  return {
    ready: { port, address: 'sink@agents.localhost' },
    stored: () => received,
    stop: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
};

const runChild = async (target: Target): Promise<void> => {
  const server = target === 'sink' ? await serveSink() : await serveAgentpost();
  process.on('message', async (message: { type: string }) => {
    if (message.type === 'usage') process.send?.({ cpu: process.cpuUsage(), stored: server.stored() } satisfies ServerReport);
    if (message.type === 'stop') {
      await server.stop();
      process.exit(0);
    }
  });
  process.send?.(server.ready);
};

// ---- parent: the client load ----

const ask = <T>(child: ChildProcess, type: string): Promise<T> =>
  new Promise((resolve) => {
    child.once('message', (message) => resolve(message as T));
    child.send({ type });
  });

const startServer = (target: Target): Promise<{ child: ChildProcess; ready: ServerReady }> =>
  new Promise((resolve, reject) => {
    // BENCH_CPU_PROF=DIR writes a V8 CPU profile of each server process into DIR.
    const profile = process.env.BENCH_CPU_PROF ? ['--cpu-prof', `--cpu-prof-dir=${process.env.BENCH_CPU_PROF}`] : [];
    const child = fork(process.argv[1], ['--serve', target], {
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'], execArgv: [...process.execArgv, ...profile],
    });
    child.once('message', (ready) => resolve({ child, ready: ready as ServerReady }));
    child.once('exit', (code) => reject(new Error(`${target} server exited with ${code}`)));
  });

/**
 * nodemailer leaves Nagle's algorithm on; its last small write of a message then waits for
 * the server's delayed ACK (about 40 ms), which would make the client the bottleneck for
 * both targets alike. Real MTAs set TCP_NODELAY, so the load generator does too.
 */
const noDelaySocket = (options: { port?: number; host?: string }, callback: (error: Error | null, socket?: { connection: Socket }) => void) => {
  const socket = connect(options.port ?? 25, options.host ?? '127.0.0.1');
  socket.setNoDelay(true);
  socket.once('connect', () => callback(null, { connection: socket }));
  socket.once('error', (error) => callback(error));
};

/** `sessions` pooled connections, each sending its share one message at a time. */
const sendAll = async (port: number, to: string, messages: Buffer[], sessions: number): Promise<void> => {
  const transports = Array.from({ length: sessions }, () =>
    nodemailer.createTransport({
      host: '127.0.0.1', port, pool: true, maxConnections: 1, maxMessages: Infinity, ignoreTLS: true, getSocket: noDelaySocket,
    } as SMTPPool.Options),
  );
  let next = 0;
  await Promise.all(transports.map(async (transport) => {
    while (next < messages.length) {
      const raw = messages[next++];
      await transport.sendMail({ envelope: { from: 'sender@example.org', to: [to] }, raw });
    }
  }));
  for (const transport of transports) transport.close();
};

interface Measured { target: Target; rate: number; serverCpuMs: number; serverSysMs: number; clientCpuMs: number; stored: number; load: string }

const measure = async (target: Target, count: number, sessions: number, bytes: number): Promise<Measured> => {
  const { child, ready } = await startServer(target);
  const { sentence } = vocabulary(5000, prng(7));
  const build = (from: number, n: number) => Array.from({ length: n }, (_, i) => messageOfSize(from + i, ready.address, bytes, sentence));
  // Warm-up of both processes (connections, JIT, statements): with less, the client is still
  // being optimized while the first target is measured, which made the sink's first round slower.
  const warmUp = Math.max(sessions * 10, Math.min(count, 2000));
  await sendAll(ready.port, ready.address, build(0, warmUp), sessions);
  const messages = build(warmUp, count);
  const load = loadavg().map((value) => fmt(value)).join(' ');
  const before = await ask<ServerReport>(child, 'usage');
  const clientBefore = process.cpuUsage();
  const started = performance.now();
  await sendAll(ready.port, ready.address, messages, sessions);
  const seconds = (performance.now() - started) / 1000;
  const client = process.cpuUsage(clientBefore);
  const after = await ask<ServerReport>(child, 'usage');
  await new Promise((resolve) => {
    child.once('exit', resolve);
    child.send({ type: 'stop' });
  });
  const serverMicros = after.cpu.user + after.cpu.system - before.cpu.user - before.cpu.system;
  return {
    target, load, rate: count / seconds, serverCpuMs: serverMicros / 1000 / count,
    serverSysMs: (after.cpu.system - before.cpu.system) / 1000 / count,
    clientCpuMs: (client.user + client.system) / 1000 / count, stored: (after.stored ?? 0) - (before.stored ?? 0),
  };
};

const main = async (): Promise<void> => {
  const count = argValue('count', 4000);
  const sessions = argValue('sessions', 16);
  const bytes = argValue('bytes', 4096);
  const rounds = argValue('rounds', 1);
  const parseThreads = loadConfig({ env: parseThreadsEnv() }).smtp.parseThreads;
  console.log(`bench:ingest  ${sessions} sessions, ${count} messages of ~${bytes} bytes per target, ${rounds} round(s), ${parseThreads} parse thread(s)`);
  const results: Measured[] = [];
  for (let round = 0; round < rounds; round += 1) {
    for (const target of ['sink', 'agentpost'] as const) {
      const result = await measure(target, count, sessions, bytes);
      results.push(result);
      console.log(
        `${target.padEnd(9)} ${fmt(result.rate, 0).padStart(6)} msg/s  server CPU ${fmt(result.serverCpuMs, 3)} ms/msg ` +
        `(system ${fmt(result.serverSysMs, 3)})  ` +
        `client CPU ${fmt(result.clientCpuMs, 3)} ms/msg  stored ${result.stored}  load before ${result.load}`,
      );
    }
  }
  // Each round runs the two targets back to back, so its ratio is the least exposed to load changes.
  const ratios = Array.from({ length: rounds }, (_, round) => results[round * 2 + 1].rate / results[round * 2].rate);
  const cpu = (target: Target) => percentile(results.filter((r) => r.target === target).map((r) => r.serverCpuMs), 50);
  console.log(`agentpost / sink per round: ${ratios.map((ratio) => `${fmt(ratio)}x`).join(' ')}; median ${fmt(percentile(ratios, 50))}x (target >= 0.35x)`);
  console.log(`server CPU per message, median: agentpost ${fmt(cpu('agentpost'), 3)} ms, sink ${fmt(cpu('sink'), 3)} ms`);
};

if (process.argv[2] === '--serve') await runChild(process.argv[3] as Target);
else await main();
