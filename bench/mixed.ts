/**
 * `npm run bench:mixed`: REST inbox list and read latency with no ingest, then while 16 SMTP
 * sessions ingest, in one run; then the nested-HTML bomb (2.2 MB of nested <div>s) read 10
 * times while 16 sessions ingest, with /healthz probed every 10 ms. The server is
 * `agentpost serve` in a process of its own (bench/ingest-targets.ts), so the figures are its
 * own, not the load generator's. Prints p50/p99/max and the verdicts: list and read p99 under
 * load within 3x idle and under 25 ms; /healthz p99 during the bomb reads under 50 ms.
 * Options: --seed N (messages stored first, default 2000), --requests N (lists and reads per
 * phase, default 400), --sessions N (default 16).
 */
import { loadavg } from 'node:os';
import { performance } from 'node:perf_hooks';
import { nestedHtmlBomb } from '../test/helpers/hostile.js';
import { startAgentpost } from './ingest-targets.js';
import { argValue, fmt, messageOfSize, percentile, prng, vocabulary } from './lib.js';
import { rssMb } from './proc.js';
import { dataPayload, runLoad } from './smtp-load.js';
import { probeOnThread } from './healthz-probe.js';

interface Mailbox {
  baseUrl: string;
  port: number;
  email: string;
  apiKey: string;
}

/** Messages of about 4 KB, `count` from `first`, ready to send. */
const payloads = (to: string, first: number, count: number): Buffer[] => {
  const { sentence } = vocabulary(5000, prng(first + 1));
  return Array.from({ length: count }, (_, i) => dataPayload(messageOfSize(first + i, to, 4096, sentence)));
};

/** `sessions` SMTP sessions sending rounds of messages until stopped; `stop` resolves with how many went in. */
const ingest = (box: Mailbox, sessions: number, first: number) => {
  let running = true;
  let sent = 0;
  const done = (async () => {
    while (running) {
      const round = payloads(box.email, first + sent, sessions * 25);
      await runLoad({ port: box.port, to: box.email, payloads: round, sessions, reuse: true });
      sent += round.length;
    }
  })();
  return { stop: async (): Promise<number> => ((running = false), await done, sent) };
};

const timed = async (run: () => Promise<unknown>): Promise<number> => {
  const started = performance.now();
  await run();
  return performance.now() - started;
};

const get = async (url: string, key?: string): Promise<any> => {
  const response = await fetch(url, { headers: { 'user-agent': 'agentpost-bench/1.0', ...(key ? { authorization: `Bearer ${key}` } : {}) } });
  if (response.status !== 200) throw new Error(`${url}: ${response.status}`);
  return response.json();
};

/** Alternating inbox lists and reads of random stored messages, one request at a time. */
const listAndRead = async (box: Mailbox, requests: number, stored: number, random: () => number) => {
  const list: number[] = [];
  const read: number[] = [];
  for (let i = 0; i < requests; i += 1) {
    list.push(await timed(() => get(`${box.baseUrl}/api/v1/agent/inbox?limit=50`, box.apiKey)));
    const id = 1 + Math.floor(random() * stored);
    read.push(await timed(() => get(`${box.baseUrl}/api/v1/agent/email/${id}?markAsRead=false`, box.apiKey)));
  }
  return { list, read };
};

/** /healthz every `everyMs`, one request at a time, until stopped. */
const probe = (box: Mailbox, everyMs: number) => {
  const samples: number[] = [];
  let running = true;
  const done = (async () => {
    while (running) {
      samples.push(await timed(() => get(`${box.baseUrl}/healthz`)));
      await new Promise((resolve) => setTimeout(resolve, everyMs));
    }
  })();
  return { stop: async (): Promise<number[]> => ((running = false), await done, samples) };
};

const line = (label: string, samples: number[]): string =>
  `${label.padEnd(30)} p50 ${fmt(percentile(samples, 50)).padStart(7)} ms   p99 ${fmt(percentile(samples, 99)).padStart(7)} ms   max ${fmt(Math.max(...samples)).padStart(7)} ms`;

const verdict = (ok: boolean): string => (ok ? 'MET' : 'NOT MET');
const load = (): string =>
  loadavg()
    .map((value) => fmt(value))
    .join(' ');

const main = async (): Promise<void> => {
  const seed = argValue('seed', 2000);
  const requests = argValue('requests', 400);
  const sessions = argValue('sessions', 16);
  const server = await startAgentpost('agentpost', { accounts: 1, greetingDelayMs: 0 });
  const box: Mailbox = { baseUrl: server.baseUrl, port: server.port, email: server.accounts[0].email, apiKey: server.accounts[0].apiKey };
  try {
    const random = prng(11);
    console.log(`bench:mixed  ${seed} messages stored first, ${requests} lists + ${requests} reads per phase, ${sessions} SMTP sessions; load ${load()}`);
    await runLoad({ port: box.port, to: box.email, payloads: payloads(box.email, 0, seed), sessions, reuse: true });
    await server.drained();
    await listAndRead(box, 50, seed, random); // warm-up: connections, JIT, statements

    const idle = await listAndRead(box, requests, seed, random);
    const loadStarted = performance.now();
    const background = ingest(box, sessions, seed);
    const loaded = await listAndRead(box, requests, seed, random);
    const rate = (await background.stop()) / ((performance.now() - loadStarted) / 1000);
    // What the burst queued is delivered before the next phase (the bomb must be the newest message).
    await server.drained();

    await runLoad({ port: box.port, to: box.email, payloads: [dataPayload(nestedHtmlBomb().raw)], sessions: 1, reuse: true });
    const bombId = (await get(`${box.baseUrl}/api/v1/agent/inbox?limit=1`, box.apiKey)).emails[0].id as string;
    const hostile = ingest(box, sessions, 10_000_000);
    const health = probe(box, 10);
    const healthOnThread = probeOnThread(box.baseUrl, 10);
    const bombReads: number[] = [];
    for (let i = 0; i < 10; i += 1) bombReads.push(await timed(() => get(`${box.baseUrl}/api/v1/agent/email/${bombId}?markAsRead=false`, box.apiKey)));
    const healthSamples = await health.stop();
    const healthThreadSamples = await healthOnThread.stop();
    await hostile.stop();
    const rss = rssMb(server.pid);

    console.log(line('list, no ingest', idle.list));
    console.log(line('read, no ingest', idle.read));
    console.log(line(`list, ${sessions} sessions ingesting`, loaded.list));
    console.log(line(`read, ${sessions} sessions ingesting`, loaded.read));
    console.log(`ingest meanwhile: ${fmt(rate, 0)} msg/s; server RSS ${fmt(rss.now, 0)} MB, peak ${fmt(rss.peak, 0)} MB`);
    console.log(line('read of the 2.2 MB HTML bomb', bombReads));
    console.log(line('/healthz during those reads', healthThreadSamples));
    console.log(line("  probed from the bench's own thread", healthSamples));
    for (const kind of ['list', 'read'] as const) {
      const underLoad = percentile(loaded[kind], 99);
      const base = percentile(idle[kind], 99);
      console.log(
        `verdict ${kind}: p99 under load ${fmt(underLoad)} ms vs idle ${fmt(base)} ms (${fmt(underLoad / base)}x): ` +
          `within 3x ${verdict(underLoad <= 3 * base)}, under 25 ms ${verdict(underLoad < 25)}`,
      );
    }
    const healthP99 = percentile(healthThreadSamples, 99);
    console.log(`verdict /healthz p99 while the bomb is read 10 times under ingest: ${fmt(healthP99)} ms, under 50 ms ${verdict(healthP99 < 50)}`);
    console.log(`load after: ${load()}`);
  } finally {
    await server.stop();
  }
};

await main();
