/**
 * `npm run bench:mixed`: REST inbox list and read latency with no ingest, then while 16 SMTP
 * sessions ingest, in one run; then the nested-HTML bomb (2.2 MB of nested <div>s) read 10
 * times while 16 sessions ingest, with /healthz probed every 10 ms. The server runs in a
 * child process, so the figures are its own, not the load generator's. Prints p50/p99 and
 * the verdicts: list and read p99 under load within 3x idle and under 25 ms; /healthz p99
 * during the bomb reads under 50 ms. Options: --seed N (messages stored first, default 2000),
 * --requests N (list and read requests per phase, default 400), --sessions N (default 16).
 */
import { fork, type ChildProcess } from 'node:child_process';
import { loadavg } from 'node:os';
import { performance } from 'node:perf_hooks';
import { loadConfig } from '../src/config/load.js';
import { createLogger } from '../src/core/logger.js';
import { createApp } from '../src/main.js';
import { sourceParseWorker } from '../src/workers/threads/parse-thread-source.js';
import { sourceSearchWorker } from '../src/workers/threads/search-thread-source.js';
import { nestedHtmlBomb } from '../test/helpers/hostile.js';
import { argValue, fmt, messageOfSize, percentile, prng, smtpSessions, tempDir, vocabulary } from './lib.js';

interface Ready { http: string; smtp: number; email: string; apiKey: string }

// ---- child: the server ----

const runChild = async (): Promise<void> => {
  const dir = tempDir('agentpost-bench-mixed-');
  const config = loadConfig({ overrides: { dataDir: dir.path, http: { port: 0 }, smtp: { port: 0 }, submission: { port: 0 }, imap: { port: 0 }, log: { level: 'silent' } } });
  const app = createApp(config, { logger: createLogger('silent', () => {}), parseWorker: sourceParseWorker, searchWorker: sourceSearchWorker });
  const ports = await app.start();
  const agent = app.services.accounts.register({ agentId: 'bench' }, '127.0.0.1');
  process.on('message', async () => {
    await app.stop();
    dir.remove();
    process.exit(0);
  });
  process.send?.({ http: app.baseUrl, smtp: ports.smtp, email: agent.email, apiKey: agent.apiKey } satisfies Ready);
};

// ---- parent: the clients ----

const startServer = (): Promise<{ child: ChildProcess; ready: Ready }> =>
  new Promise((resolve, reject) => {
    const child = fork(process.argv[1], ['--serve'], { stdio: ['ignore', 'inherit', 'inherit', 'ipc'] });
    child.once('message', (ready) => resolve({ child, ready: ready as Ready }));
    child.once('exit', (code) => reject(new Error(`server exited with ${code}`)));
  });

/** 16 sessions sending messages until stopped; resolves with how many were accepted. */
const ingest = (port: number, to: string, sessions: number, first: number, limit = Infinity) => {
  const { sentence } = vocabulary(5000, prng(first));
  const transports = smtpSessions(port, sessions);
  let next = first;
  let running = true;
  const done = Promise.all(transports.map(async (transport) => {
    while (running && next - first < limit) {
      const index = next++;
      await transport.sendMail({ envelope: { from: 'sender@example.org', to: [to] }, raw: messageOfSize(index, to, 4096, sentence) });
    }
  })).then(() => transports.forEach((transport) => transport.close()));
  return {
    done,
    stop: async (): Promise<number> => {
      running = false;
      await done;
      return next - first;
    },
  };
};

const timed = async (run: () => Promise<unknown>): Promise<number> => {
  const started = performance.now();
  await run();
  return performance.now() - started;
};

const get = (url: string, key?: string) => fetch(url, key ? { headers: { authorization: `Bearer ${key}` } } : {}).then(async (response) => {
  if (response.status !== 200) throw new Error(`${url}: ${response.status}`);
  return response.json() as Promise<any>;
});

/** Alternating inbox lists and reads of random stored messages. */
const listAndRead = async (ready: Ready, requests: number, stored: number, random: () => number) => {
  const list: number[] = [];
  const read: number[] = [];
  for (let i = 0; i < requests; i += 1) {
    list.push(await timed(() => get(`${ready.http}/api/v1/agent/inbox?limit=50`, ready.apiKey)));
    const id = 1 + Math.floor(random() * stored);
    read.push(await timed(() => get(`${ready.http}/api/v1/agent/email/${id}?markAsRead=false`, ready.apiKey)));
  }
  return { list, read };
};

/** /healthz every `everyMs`, one request at a time, until stopped. */
const probe = (ready: Ready, everyMs: number) => {
  const samples: number[] = [];
  let running = true;
  const done = (async () => {
    while (running) {
      samples.push(await timed(() => get(`${ready.http}/healthz`)));
      await new Promise((resolve) => setTimeout(resolve, everyMs));
    }
  })();
  return { stop: async () => ((running = false), await done, samples) };
};

const line = (label: string, samples: number[]): string =>
  `${label.padEnd(28)} p50 ${fmt(percentile(samples, 50)).padStart(7)} ms   p99 ${fmt(percentile(samples, 99)).padStart(7)} ms   max ${fmt(Math.max(...samples)).padStart(7)} ms`;

const verdict = (ok: boolean): string => (ok ? 'MET' : 'NOT MET');

const main = async (): Promise<void> => {
  const seed = argValue('seed', 2000);
  const requests = argValue('requests', 400);
  const sessions = argValue('sessions', 16);
  const { child, ready } = await startServer();
  const random = prng(11);
  console.log(`bench:mixed  ${seed} messages stored first, ${requests} lists + ${requests} reads per phase, ${sessions} SMTP sessions; load ${loadavg().map((v) => fmt(v)).join(' ')}`);
  await ingest(ready.smtp, ready.email, sessions, 0, seed).done;
  await listAndRead(ready, 50, seed, random); // warm-up: connections, JIT, statements

  const idle = await listAndRead(ready, requests, seed, random);
  const load = ingest(ready.smtp, ready.email, sessions, seed);
  const started = performance.now();
  const loaded = await listAndRead(ready, requests, seed, random);
  const ingested = await load.stop();
  const rate = ingested / ((performance.now() - started) / 1000);

  const bomb = nestedHtmlBomb();
  const [transport] = smtpSessions(ready.smtp, 1);
  await transport.sendMail({ envelope: { from: 'mallory@example.net', to: [ready.email] }, raw: bomb.raw });
  transport.close();
  const inbox = await get(`${ready.http}/api/v1/agent/inbox?limit=1`, ready.apiKey);
  const bombId = inbox.emails[0].id as string;
  const hostileLoad = ingest(ready.smtp, ready.email, sessions, 1_000_000);
  const health = probe(ready, 10);
  const bombReads: number[] = [];
  for (let i = 0; i < 10; i += 1) bombReads.push(await timed(() => get(`${ready.http}/api/v1/agent/email/${bombId}?markAsRead=false`, ready.apiKey)));
  const healthSamples = await health.stop();
  await hostileLoad.stop();
  child.send({ type: 'stop' });

  console.log(line('list, no ingest', idle.list));
  console.log(line('read, no ingest', idle.read));
  console.log(line(`list, ${sessions} sessions ingesting`, loaded.list));
  console.log(line(`read, ${sessions} sessions ingesting`, loaded.read));
  console.log(`ingest meanwhile: ${fmt(rate, 0)} msg/s`);
  console.log(line('read of the 2.2 MB HTML bomb', bombReads));
  console.log(line('/healthz during those reads', healthSamples));
  for (const kind of ['list', 'read'] as const) {
    const underLoad = percentile(loaded[kind], 99);
    const base = percentile(idle[kind], 99);
    console.log(`verdict ${kind}: p99 under load ${fmt(underLoad)} ms vs idle ${fmt(base)} ms (${fmt(underLoad / base)}x): ` +
      `within 3x ${verdict(underLoad <= 3 * base)}, under 25 ms ${verdict(underLoad < 25)}`);
  }
  console.log(`verdict /healthz p99 while the bomb is read 10 times under ingest: ${fmt(percentile(healthSamples, 99))} ms, under 50 ms ${verdict(percentile(healthSamples, 99) < 50)}`);
  console.log(`load after: ${loadavg().map((v) => fmt(v)).join(' ')}`);
};

if (process.argv[2] === '--serve') await runChild();
else await main();
