// npm run bench:send: sends through REST and relays every remote recipient to a loopback
// SMTP sink (relay mode). Prints accepted sends/s and delivered recipients/s. When Postfix is
// installed, the same load (same messages, same recipients, same client concurrency) is
// submitted to a private Postfix instance relaying to the same sink, and the ratio printed.
// Everything shares this machine (2 cores), so the figures include that contention.
import { execFileSync, spawn } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import nodemailer from 'nodemailer';
import { freePort, postfixInstalled, startPostfix, waitForPort } from './postfix.js';
import { type RelaySink, startRelaySink } from './relay-sink.js';

const SENDS = Number(process.env.BENCH_SENDS ?? 1000);
const RECIPIENTS_PER_SEND = Number(process.env.BENCH_RECIPIENTS ?? 2);
const CLIENTS = Number(process.env.BENCH_CLIENTS ?? 16);
const TOTAL_RECIPIENTS = SENDS * RECIPIENTS_PER_SEND;
const TEXT = 'Hello from the agentpost send benchmark.\n'.repeat(20);

const recipientsOf = (i: number): string[] => Array.from({ length: RECIPIENTS_PER_SEND }, (_, r) => `user${i}-${r}@domain${r}.bench.test`);

/** Runs `work(i)` for i in [0, total) with `concurrency` in flight. */
const pool = async (total: number, concurrency: number, work: (i: number) => Promise<void>) => {
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < total) await work(next++);
    }),
  );
};

/**
 * agentpost runs as its own process (`agentpost serve`), as Postfix does, so the client and
 * the sink in this process do not share its event loop.
 */
const benchAgentpost = async (relayPort: number, sink: RelaySink) => {
  const dataDir = mkdtempSync(join(tmpdir(), 'agentpost-bench-send-'));
  const unlimited = { recipientsPerDay: 10_000_000, recipientsPerMinute: 10_000_000 };
  const [httpPort, smtpPort, submissionPort] = [await freePort(), await freePort(), await freePort()];
  const configFile = join(dataDir, 'config.json');
  writeFileSync(
    configFile,
    JSON.stringify({
      dataDir,
      http: { port: httpPort },
      smtp: { port: smtpPort },
      submission: { port: submissionPort },
      log: { level: 'warn' },
      limits: { sendRequestsPerMinute: 10_000_000, sendingStates: { probation: unlimited, standard: unlimited, reviewed: unlimited } },
      outbound: { relay: `smtp://127.0.0.1:${relayPort}` },
    }),
  );
  const cli = (...args: string[]) => execFileSync(process.execPath, ['--import', 'tsx', 'bin/main.ts', ...args, '--config', configFile], { stdio: 'pipe' });
  const server = spawn(process.execPath, ['--import', 'tsx', 'bin/main.ts', 'serve', '--config', configFile], { stdio: ['ignore', 'ignore', 'inherit'] });
  const baseUrl = `http://127.0.0.1:${httpPort}`;
  try {
    await waitForPort(httpPort);
    const register = await fetch(`${baseUrl}/api/v1/agent/register`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'user-agent': 'agentpost-bench/1.0' },
      body: JSON.stringify({ agentId: 'bench' }),
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

const benchPostfix = async (sink: RelaySink) => {
  const postfix = await startPostfix([`relayhost=[127.0.0.1]:${sink.port}`]);
  try {
    const transport = nodemailer.createTransport({
      host: '127.0.0.1',
      port: postfix.port,
      pool: true,
      maxConnections: CLIENTS,
      maxMessages: Infinity,
      ignoreTLS: true,
    });
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

const rate = (count: number, seconds: number) => (count / seconds).toFixed(0);

const sink = await startRelaySink();
console.log(`bench:send: ${SENDS} sends x ${RECIPIENTS_PER_SEND} remote recipients, ${CLIENTS} concurrent clients, relay to a loopback sink`);
const ours = await benchAgentpost(sink.port, sink);
console.log(
  `agentpost: accepted ${rate(SENDS, ours.acceptedSeconds)} sends/s (${ours.acceptedSeconds.toFixed(2)} s); delivered ${rate(TOTAL_RECIPIENTS, ours.deliveredSeconds)} recipients/s (all ${TOTAL_RECIPIENTS} in ${ours.deliveredSeconds.toFixed(2)} s)`,
);
if (!postfixInstalled()) {
  console.log('postfix: not installed, no comparison (apt-get install postfix to compare)');
} else {
  const theirs = await benchPostfix(sink);
  console.log(
    `postfix:   accepted ${rate(SENDS, theirs.acceptedSeconds)} messages/s (${theirs.acceptedSeconds.toFixed(2)} s); delivered ${rate(TOTAL_RECIPIENTS, theirs.deliveredSeconds)} recipients/s (all in ${theirs.deliveredSeconds.toFixed(2)} s)`,
  );
  console.log(`ratio (agentpost / postfix delivered recipients/s): ${(theirs.deliveredSeconds / ours.deliveredSeconds).toFixed(2)}`);
}
await sink.close();
