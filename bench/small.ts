/**
 * `npm run bench:small`: the single executable as a small team's 1 GB server runs it, its V8
 * heap capped (`--heap-mb`, 256, through NODE_OPTIONS), for `--minutes` (10) under a mixed
 * load, each part in a loop of its own:
 * - 16 SMTP sessions ingesting 4 KB messages into one mailbox;
 * - 100 IMAP sessions in IDLE and 100 event streams, spread over 20 mailboxes (5 streams each, the
 *   per-account cap);
 * - 10 IMAP clients, in turn, each syncing a mailbox of `--sync-messages` (10,000) messages
 *   (SELECT, then UID FETCH 1:* of the flags, sizes, ENVELOPE and BODYSTRUCTURE);
 * - REST: an inbox list, a read and a search, one after another;
 * - sends of two remote recipients through REST (2 at a time), relayed to a sink here.
 * /healthz is probed every 10 ms from a thread of its own. Prints each part's rate and errors,
 * /healthz p50/p99/max, and the server's RSS idle, at its peak and 60 s after the load.
 * Targets (docs/contributing/benchmarks.md): peak RSS under 400 MB, /healthz p99 under 50 ms,
 * no error answered. Needs `npm run package` first (or `--executable PATH`).
 */
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { loadavg } from 'node:os';
import { holdIdleStreams } from './event-streams.js';
import { probeOnThread } from './healthz-probe.js';
import { BenchImap, fetchCount } from './imap-client.js';
import { holdIdleImap } from './imap-idle.js';
import { startAgentpost } from './ingest-targets.js';
import { argValue, fmt, messageOfSize, percentile, prng, vocabulary } from './lib.js';
import { rssMb, sampleRss } from './proc.js';
import { startRelaySink } from './relay-sink.js';
import { dataPayload, runLoad } from './smtp-load.js';

const minutes = argValue('minutes', 10);
const heapMb = argValue('heap-mb', 256);
const syncMessages = argValue('sync-messages', 10_000);
const executableAt = process.argv.indexOf('--executable');
const executable = executableAt >= 0 ? process.argv[executableAt + 1] : 'dist/agentpost';
if (!existsSync(executable)) throw new Error(`${executable} is missing: run npm run package first, or give --executable PATH`);

const { sentence, words } = vocabulary(5000, prng(11));
const payloads = (to: string, first: number, count: number): Buffer[] =>
  Array.from({ length: count }, (_, i) => dataPayload(messageOfSize(first + i, to, 4096, sentence)));
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const mb = (value: number) => `${fmt(value, 0)} MB`;

interface Part {
  name: string;
  done: number;
  errors: number;
  unit: string;
}

/** Runs `step` again and again until stopped, counting what it did and what failed. */
const loop = (part: Part, running: () => boolean, step: () => Promise<number>): Promise<void> =>
  (async () => {
    while (running()) {
      try {
        // Read after the step: two loops share a part, and `done += await step()` would add to a stale count.
        const done = await step();
        part.done += done;
      } catch {
        part.errors += 1;
        await sleep(100);
      }
    }
  })();

const rest = async (baseUrl: string, key: string, method: string, path: string, body?: unknown): Promise<any> => {
  const response = await fetch(`${baseUrl}${path}`, {
    method,
    headers: { authorization: `Bearer ${key}`, 'user-agent': 'agentpost-bench/1.0', ...(body ? { 'content-type': 'application/json' } : {}) },
    body: body ? JSON.stringify(body) : undefined,
  });
  if (response.status >= 300) throw new Error(`${method} ${path}: ${response.status}`);
  return response.json();
};

/** One IMAP client's sync of `email`'s INBOX: the messages it fetched. */
const imapSync = async (port: number, email: string, key: string): Promise<number> => {
  const client = await BenchImap.open(port);
  try {
    await client.command(`LOGIN "${email}" "${key}"`);
    await client.command('SELECT INBOX');
    const answer = await client.command('UID FETCH 1:* (UID FLAGS INTERNALDATE RFC822.SIZE ENVELOPE BODYSTRUCTURE)');
    await client.command('LOGOUT').catch(() => undefined);
    return fetchCount(answer);
  } finally {
    client.close();
  }
};

const sink = await startRelaySink();
// The executable's own V8 flags stay; the heap cap comes on top, as an operator would set it.
process.env.NODE_OPTIONS = `--max-old-space-size=${heapMb}`;
const unlimited = { recipientsPerDay: 10_000_000, recipientsPerMinute: 10_000_000 };
const server = await startAgentpost('agentpost, 1 GB server', {
  executable,
  accounts: 20,
  config: {
    outbound: { relay: `smtp://127.0.0.1:${sink.port}` },
    limits: {
      registrationsPerIpPerHour: 100_000,
      sendRequestsPerMinute: 10_000_000,
      sendingStates: { probation: unlimited, standard: unlimited, reviewed: unlimited },
    },
  },
});
delete process.env.NODE_OPTIONS;
console.log(
  `bench:small: ${executable}, heap capped at ${heapMb} MB, ${minutes} minute(s), a mailbox of ${syncMessages} messages to sync; load average ${loadavg()
    .map((v) => fmt(v))
    .join(' ')}`,
);
try {
  execFileSync(executable, ['credits', 'add', server.address, '100000000', '--config', server.configFile], { stdio: 'pipe' });
  const ingestBox = server.accounts[0];
  // The mailbox the IMAP clients sync and REST reads: filled first, before anything is measured.
  await runLoad({ port: server.port, to: server.address, payloads: payloads(server.address, 0, syncMessages), sessions: 16, reuse: true });
  await server.drained();
  await sleep(15_000);
  const idle = rssMb(server.pid);
  console.log(`idle after filling: RSS ${mb(idle.now)} (anonymous ${mb(idle.anonymous)}, file ${mb(idle.file)})`);

  const imapIdle = await holdIdleImap(server.imapPort, 100, server.accounts);
  const streams = await holdIdleStreams(server.baseUrl, 100, server.accounts);
  const rss = sampleRss(server.pid, 200);
  const health = probeOnThread(server.baseUrl, 10);
  let running = true;
  const parts: Record<string, Part> = {
    ingest: { name: 'SMTP ingest, 16 sessions', done: 0, errors: 0, unit: 'msg/s' },
    sync: { name: `IMAP syncs of ${syncMessages}, in turn`, done: 0, errors: 0, unit: 'syncs/min' },
    rest: { name: 'REST list, read and search', done: 0, errors: 0, unit: 'req/s' },
    sends: { name: 'REST sends, 2 at a time', done: 0, errors: 0, unit: 'sends/s' },
  };
  const started = performance.now();
  const random = prng(5);
  let sent = 0;
  let syncedMessages = 0;
  const loads = [
    loop(
      parts.ingest,
      () => running,
      async () => {
        const round = payloads(ingestBox.email, 1_000_000 + sent, 16 * 25);
        await runLoad({ port: server.port, to: ingestBox.email, payloads: round, sessions: 16, reuse: true });
        sent += round.length;
        return round.length;
      },
    ),
    loop(
      parts.sync,
      () => running,
      async () => {
        syncedMessages += await imapSync(server.imapPort, server.address, server.apiKey);
        return 1;
      },
    ),
    loop(
      parts.rest,
      () => running,
      async () => {
        const list = await rest(server.baseUrl, server.apiKey, 'GET', '/api/v1/agent/inbox?limit=50');
        const ids = (list.emails as { id: string }[]).map((email) => email.id);
        await rest(server.baseUrl, server.apiKey, 'GET', `/api/v1/agent/email/${ids[Math.floor(random() * ids.length)]}?markAsRead=false`);
        await rest(server.baseUrl, server.apiKey, 'GET', `/api/v1/agent/inbox?search=${words[Math.floor(random() * 200)]}&limit=20`);
        return 3;
      },
    ),
    ...[0, 1].map((lane) =>
      loop(
        parts.sends,
        () => running,
        async () => {
          const n = parts.sends.done + parts.sends.errors;
          await rest(server.baseUrl, server.apiKey, 'POST', '/api/v1/agent/send', {
            to: [`a${lane}.${n}@remote.bench.test`, `b${lane}.${n}@remote.bench.test`],
            subject: `small ${lane}.${n}`,
            text: 'a send from bench:small',
          });
          return 1;
        },
      ),
    ),
  ];
  await sleep(minutes * 60_000);
  running = false;
  await Promise.all(loads);
  const seconds = (performance.now() - started) / 1000;
  const healthSamples = await health.stop();
  const peak = rss.highest();
  rss.stop();
  imapIdle.close();
  streams.close();
  for (const part of Object.values(parts)) {
    const rate = part.unit === 'syncs/min' ? (part.done / seconds) * 60 : part.done / seconds;
    console.log(`${part.name.padEnd(34)} ${fmt(rate, 1).padStart(8)} ${part.unit}  (${part.done} in ${fmt(seconds, 0)} s, ${part.errors} errors)`);
  }
  console.log(`IMAP syncs fetched ${syncedMessages} messages; the sink took ${sink.received} recipients`);
  console.log(
    `/healthz (${healthSamples.length} probes): p50 ${fmt(percentile(healthSamples, 50))} ms, p99 ${fmt(percentile(healthSamples, 99))} ms, max ${fmt(Math.max(...healthSamples))} ms`,
  );
  console.log(`RSS peak ${mb(peak.now)} (anonymous ${mb(peak.anonymous)}, file ${mb(peak.file)})`);
  await sleep(60_000);
  const after = rssMb(server.pid);
  console.log(`RSS 60 s after the load ${mb(after.now)} (anonymous ${mb(after.anonymous)}, file ${mb(after.file)})`);
  const errors = Object.values(parts).reduce((sum, part) => sum + part.errors, 0);
  console.log(
    `targets: peak RSS under 400 MB ${peak.now < 400 ? 'MET' : 'NOT MET'}; /healthz p99 under 50 ms ${percentile(healthSamples, 99) < 50 ? 'MET' : 'NOT MET'}; no error ${errors === 0 ? 'MET' : `NOT MET (${errors})`}`,
  );
} finally {
  await server.stop();
  await sink.close();
}
