/**
 * `npm run bench:ingest`: SMTP sessions send 4 KB messages to one mailbox. The parts below
 * (`--only rates,connections,memory,domains` picks some):
 * - rates: messages/s and server CPU per message for agentpost with no greeting pause, with
 *   the MX's default pause (when it is not 0), a bare smtp-server sink that stores nothing
 *   and a private Postfix accepting into its queue, each over reused connections and over a
 *   new connection per message, and agentpost's rate against Postfix's and the sink's.
 * - connections: the (anonymous) memory 1,000 idle SMTP connections, then 1,000 IMAP IDLE sessions take,
 *   and the ingest rate while they are held against the rate without them.
 * - tls: on one agentpost with a certificate (ECDSA P-256, as certbot makes by default),
 *   plain and STARTTLS sessions alternately: over reused connections, and over a new
 *   connection per message with a full handshake or a resumed session each; STARTTLS's rate
 *   as a ratio of plain's per round; then node:tls's own cost per connection with no SMTP
 *   (bench/tls-floor.ts) and the most a new connection per message could reach with it alone.
 * - memory: agentpost's RSS idle (15 s after start, and 45 s after start, when the idle
 *   parse and search workers have ended), at the peak of a 20,000-message ingest and a minute after.
 * - threading: the rate with threads assigned at ingest against threads.enabled false, in the
 *   same run, over 100,000 reply-shaped messages each (--thread-count N); bench/ingest-threading.ts.
 * - domains: the rate with the recipients spread over 100 aliases on 10 verified custom
 *   domains against the rate to the mailbox's own address, in the same run (bench/ingest-domains.ts).
 * - burst: a burst of --burst N messages (20,000) over --burst-mailboxes N mailboxes (4), from
 *   the SMTP 250 to visible over IMAP, for agentpost against Postfix handing it to Dovecot over
 *   LMTP into Maildir, in the same run (bench/ingest-burst.ts).
 * - pauses (only when asked for): per greeting pause, the new-connection rate and whether
 *   clients that talk before the greeting are refused; the MX default is chosen from it.
 * - authentication (only when asked for): the rate and server CPU per message with the SPF,
 *   DKIM, DMARC and ARC checks on and off (`smtp.authenticationChecks`), mail DKIM-signed.
 * - trees (only when asked for, with `--tree NAME=DIR` twice or more): agentpost from other
 *   source trees (commits checked out) under the same load in one run (bench/ingest-trees.ts).
 * - processes (only when asked for): one agentpost against two on one data folder, the
 *   sessions split between their MX ports (bench/ingest-processes.ts).
 * Default parts: rates,tls,connections,memory,threading,domains,burst.
 * Options: --count N (measured messages per target, 4000), --sessions N (16), --bytes N
 * (4096), --rounds N (1), --domain-rounds N (3), --idle N (1000), --memory-count N (20000), --after-seconds N (60),
 * --burst N (20000), --burst-mailboxes N (4), --burst-poll-ms N (50), --executable PATH (run that single executable, e.g. dist/agentpost, instead of the source).
 * AGENTPOST_PARSE_THREADS=N sets the server's parse workers. Numbers are printed, not judged.
 */
import { execFileSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { generate } from 'selfsigned';
import { defaultConfig } from '../src/config/defaults.js';
import { burstPart } from './ingest-burst.js';
import { domainsPart } from './ingest-domains.js';
import { signedBySender, startAgentpost, startPostfixTarget, startSink, type Agentpost, type Target } from './ingest-targets.js';
import { holdIdleStreams } from './event-streams.js';
import { holdIdleImap } from './imap-idle.js';
import { threading } from './ingest-threading.js';
import { reportFloor } from './tls-floor.js';
import { treesPart } from './ingest-trees.js';
import { processesPart } from './ingest-processes.js';
import { argValue, fmt, messageOfSize, percentile, prng, stringArgs, tempDir, vocabulary } from './lib.js';
import { postfixInstalled, postfixVersion } from './postfix.js';
import { cpuMs, rssMb, sampleRss } from './proc.js';
import { dataPayload, holdIdleSmtp, refusesEarlyTalker, runLoad, type Load } from './smtp-load.js';

const count = argValue('count', 4000);
const sessions = argValue('sessions', 16);
const bytes = argValue('bytes', 4096);
const rounds = argValue('rounds', 1);
const idle = argValue('idle', 1000);
const memoryCount = argValue('memory-count', 20_000);
const afterSeconds = argValue('after-seconds', 60);
const stringArg = (name: string): string | undefined => {
  const index = process.argv.indexOf(`--${name}`);
  return index >= 0 ? process.argv[index + 1] : undefined;
};
const executable = stringArg('executable');
const parts = new Set((stringArg('only') ?? 'rates,tls,connections,memory,threading,domains,burst').split(','));
const mxDefaultPause = defaultConfig().smtp.greetingDelayMs;

const { sentence } = vocabulary(5000, prng(7));
const payloadsFor = (to: string, from: number, n: number) => payloadsTo([to], from, n);
/** Payload i is addressed to `to[i % to.length]`, as runLoad sends it. */
const payloadsTo = (to: readonly string[], from: number, n: number) =>
  Array.from({ length: n }, (_, i) => dataPayload(messageOfSize(from + i, to[i % to.length], bytes, sentence)));
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const uptime = () => execFileSync('uptime').toString().trim();

type Mode = 'reused' | 'new connection';
interface Measured {
  rate: number;
  /** Messages per second into their mailboxes: from the first connection until the queue is empty. */
  deliveredRate?: number;
  cpuPerMessage?: number;
  greetingP50: number;
  clientCpuPerMessage: number;
  resumed: number;
}

type Payloads = (to: string, from: number, n: number) => Buffer[] | Promise<Buffer[]>;

/** A warm-up in the same mode (connections, JIT, statements), then `count` measured messages. */
const measure = async (target: Target, mode: Mode, n = count, starttls?: Load['starttls'], messages: Payloads = payloadsFor): Promise<Measured> => {
  const reuse = mode === 'reused';
  await runLoad({
    port: target.port,
    to: target.address,
    payloads: await messages(target.address, 0, Math.max(sessions * 10, Math.min(n, 2000))),
    sessions,
    reuse,
    starttls,
  });
  await target.drained?.();
  const payloads = await messages(target.address, 100_000, n);
  const before = target.pid ? cpuMs(target.pid) : 0;
  const started = performance.now();
  const { seconds, greetingMs, resumed, clientCpuMs } = await runLoad({ port: target.port, to: target.address, payloads, sessions, reuse, starttls });
  // The server CPU counts the whole delivery: a burst the MX queued is delivered after its 250s.
  const deliveredSeconds = target.drained ? (await target.drained(), (performance.now() - started) / 1000) : undefined;
  const cpu = target.pid ? cpuMs(target.pid) - before : undefined;
  return {
    rate: n / seconds,
    deliveredRate: deliveredSeconds === undefined ? undefined : n / deliveredSeconds,
    cpuPerMessage: cpu === undefined ? undefined : cpu / n,
    greetingP50: percentile(greetingMs, 50),
    clientCpuPerMessage: clientCpuMs / n,
    resumed,
  };
};

const report = (mode: Mode, name: string, m: Measured) =>
  console.log(
    `${mode.padEnd(14)} ${name.padEnd(34)} ${fmt(m.rate, 0).padStart(6)} msg/s  server CPU ${m.cpuPerMessage === undefined ? '  n/a' : fmt(m.cpuPerMessage, 3)} ms/msg  client CPU ${fmt(m.clientCpuPerMessage, 3)} ms/msg  greeting p50 ${fmt(m.greetingP50, 1)} ms${m.deliveredRate === undefined ? '' : `  in mailboxes ${fmt(m.deliveredRate, 0)} msg/s`}${m.resumed ? `  ${m.resumed} TLS sessions resumed` : ''}`,
  );

const rates = async (): Promise<void> => {
  const starters: [string, () => Promise<Target>][] = [
    ['sink', startSink],
    ['agentpost, no pause', () => startAgentpost('agentpost, no pause', { executable, greetingDelayMs: 0 })],
    ...(mxDefaultPause > 0
      ? [[`agentpost, MX default pause ${mxDefaultPause} ms`, () => startAgentpost('agentpost, MX default', { executable })] as [string, () => Promise<Target>]]
      : []),
    ...(postfixInstalled() ? [[`postfix ${postfixVersion()}`, startPostfixTarget] as [string, () => Promise<Target>]] : []),
  ];
  if (!postfixInstalled()) console.log('postfix: not installed, no comparison (apt-get install postfix)');
  // Per round and mode, each target's rate; a round runs the targets back to back, so the
  // ratio within a round is the least exposed to the machine's load changing.
  const byRound: Map<string, number>[] = [];
  for (let round = 0; round < rounds; round += 1) {
    const inRound = new Map<string, number>();
    for (const [name, start] of starters) {
      const target = await start();
      try {
        for (const mode of ['reused', 'new connection'] as const) {
          const measured = await measure(target, mode);
          report(mode, name, measured);
          inRound.set(`${mode}|${name}`, measured.rate);
        }
      } finally {
        await target.stop();
      }
    }
    byRound.push(inRound);
  }
  const [sink, fast, ...others] = starters.map(([name]) => name);
  const postfix = others.find((name) => name.startsWith('postfix'));
  const pairs: [string, string][] = [
    [fast, sink],
    ...(postfix ? [fast, ...others.filter((name) => name !== postfix)].map((name) => [name, postfix] as [string, string]) : []),
  ];
  for (const mode of ['reused', 'new connection'] as const) {
    for (const [ours, theirs] of pairs) {
      const ratios = byRound.map((inRound) => (inRound.get(`${mode}|${ours}`) ?? NaN) / (inRound.get(`${mode}|${theirs}`) ?? NaN));
      console.log(`${mode}: ${ours} / ${theirs} per round ${ratios.map((ratio) => `${fmt(ratio)}x`).join(' ')}, median ${fmt(percentile(ratios, 50))}x`);
    }
  }
};

/**
 * STARTTLS against plain on the same server, alternating within each round so both see the
 * same machine load; the ratio per round and its median (target: at least 0.6x).
 */
const tls = async (): Promise<void> => {
  const made = await generate([{ name: 'commonName', value: 'mx.bench.test' }], {
    keyType: 'ec',
    algorithm: 'sha256',
    extensions: [{ name: 'subjectAltName', altNames: [{ type: 2 as const, value: 'mx.bench.test' }] }],
  });
  const dir = tempDir('agentpost-bench-tls-');
  const files = { cert: join(dir.path, 'mx.crt'), key: join(dir.path, 'mx.key') };
  writeFileSync(files.cert, made.cert);
  writeFileSync(files.key, made.private);
  const target = await startAgentpost('agentpost', { executable, greetingDelayMs: 0, tls: files });
  try {
    const variants: [Mode, NonNullable<Load['starttls']>][] = [
      ['reused', 'full'],
      ['new connection', 'full'],
      ['new connection', 'resumed'],
    ];
    const ratios = variants.map((): number[] => []);
    // Plain new-connection CPU per message (server, client), for the floor below.
    const plainNew: { server: number; client: number }[] = [];
    for (let round = 0; round < rounds; round += 1) {
      for (const [index, [mode, handshake]] of variants.entries()) {
        const plain = await measure(target, mode);
        report(mode, 'agentpost, plain', plain);
        if (mode === 'new connection' && handshake === 'full') plainNew.push({ server: plain.cpuPerMessage ?? NaN, client: plain.clientCpuPerMessage });
        const secure = await measure(target, mode, count, handshake);
        report(mode, `agentpost, STARTTLS (${handshake} handshake)`, secure);
        ratios[index].push(secure.rate / plain.rate);
      }
    }
    for (const [index, [mode, handshake]] of variants.entries()) {
      console.log(
        `${mode}: STARTTLS (${handshake} handshake) / plain per round ${ratios[index].map((ratio) => `${fmt(ratio)}x`).join(' ')}, median ${fmt(percentile(ratios[index], 50))}x (target >= 0.6x)`,
      );
    }
    const node = executable ? (await import('../scripts/sea-runtime.mjs')).packagingNode().binary : process.execPath;
    await reportFloor(node, files, plainNew);
  } finally {
    await target.stop();
    dir.remove();
  }
};

/**
 * Per kind of idle connection, on a fresh server: the memory `idle` of them take, the ingest
 * rate while they are held, and the rate once they are gone.
 */
const connections = async (): Promise<void> => {
  const kinds: [string, (t: Agentpost) => Promise<{ close(): void }>][] = [
    ['idle SMTP connections (EHLO, then nothing)', (t) => holdIdleSmtp(t.port, idle)],
    ['IMAP sessions in IDLE', (t) => holdIdleImap(t.imapPort, idle, t.accounts)],
    ['event streams (GET /api/v1/agent/events, heartbeats only)', (t) => holdIdleStreams(t.baseUrl, idle, t.accounts)],
  ];
  for (const [kind, hold] of kinds) {
    // 50 streams per account for 1,000 on 20 accounts (the per-account cap is a policy of its own).
    const target = await startAgentpost('agentpost', {
      executable,
      greetingDelayMs: 0,
      accounts: 20,
      config: { events: { maxStreamsPerAccount: 50, maxStreams: 2000, heartbeatSeconds: 15 } },
    });
    try {
      // Past the start-up's quiet-time release (file pages handed back at 13 to 15.5 s) and the
      // idle threads' end (30 s), either of which would otherwise fall inside the window.
      await sleep(45_000);
      const before = rssMb(target.pid);
      const held = await hold(target);
      await sleep(15_000);
      const after = rssMb(target.pid);
      const loaded = await measure(target, 'reused');
      held.close();
      await sleep(2000);
      const alone = await measure(target, 'reused');
      console.log(
        // Per connection from the anonymous memory: the file pages are code, the same for one connection or a thousand.
        `${idle} ${kind}: RSS ${fmt(before.now, 0)} -> ${fmt(after.now, 0)} MB (anonymous ${fmt(before.anonymous, 0)} -> ${fmt(after.anonymous, 0)}), ` +
          `${fmt(((after.anonymous - before.anonymous) * 1024) / idle, 1)} KB each (target < 50 KB); ` +
          `ingest ${fmt(loaded.rate, 0)} msg/s while held, ${fmt(alone.rate, 0)} msg/s without: ${fmt((100 * loaded.rate) / alone.rate, 0)}% (target >= 80%)`,
      );
    } finally {
      await target.stop();
    }
  }
};

/**
 * What each greeting pause costs and what it catches, to choose the MX default from: the
 * rate with a new connection per message, and whether a client that talks the moment it is
 * connected (ratware that never waits for the greeting) is refused.
 */
const pauses = async (): Promise<void> => {
  for (const pause of [0, 10, 25, 50, 100, 250]) {
    const target = await startAgentpost('agentpost', { executable, greetingDelayMs: pause });
    try {
      const caught = await Promise.all(Array.from({ length: 20 }, () => refusesEarlyTalker(target.port)));
      const measured = await measure(target, 'new connection');
      console.log(
        `pause ${String(pause).padStart(3)} ms: ${fmt(measured.rate, 0).padStart(5)} msg/s with a new connection per message, greeting p50 ${fmt(measured.greetingP50, 1)} ms; immediate early talkers refused: ${caught.filter(Boolean).length}/20`,
      );
    } finally {
      await target.stop();
    }
  }
};

/** Messages DKIM-signed by the sender's domain, signed once per batch (the client's CPU, before any timing). */
const signedBatches = new Map<string, Promise<Buffer[]>>();
const signedPayloads: Payloads = (to, from, n) => {
  const key = `${to}|${from}|${n}`;
  if (!signedBatches.has(key)) {
    signedBatches.set(
      key,
      Promise.all(Array.from({ length: n }, async (_, i) => dataPayload(await signedBySender(messageOfSize(from + i, to, bytes, sentence))))),
    );
  }
  return signedBatches.get(key) as Promise<Buffer[]>;
};

/**
 * What judging received mail costs: agentpost with `smtp.authenticationChecks` on and off in
 * the same run, both loaded with mail DKIM-signed by its sender's domain (SPF, DKIM, DMARC and
 * so the whole verdict pass, as for most real mail). Each round runs both, the order swapped
 * every round, so a change in the machine's load hits both.
 */
const authentication = async (): Promise<void> => {
  const names = { on: 'agentpost, authentication on', off: 'agentpost, authentication off' };
  const perRound: Map<string, Measured>[] = [];
  for (let round = 0; round < rounds; round += 1) {
    const inRound = new Map<string, Measured>();
    const order = round % 2 === 0 ? (['on', 'off'] as const) : (['off', 'on'] as const);
    for (const checks of order) {
      const target = await startAgentpost(names[checks], { executable, greetingDelayMs: 0, authenticationChecks: checks === 'on' });
      try {
        for (const mode of ['reused', 'new connection'] as const) {
          const measured = await measure(target, mode, count, undefined, signedPayloads);
          report(mode, names[checks], measured);
          inRound.set(`${mode}|${checks}`, measured);
        }
        console.log(`  the last message's trust: ${(await target.lastTrust()) ?? 'none (no verdict)'}`);
      } finally {
        await target.stop();
      }
    }
    perRound.push(inRound);
  }
  for (const mode of ['reused', 'new connection'] as const) {
    const ratios = perRound.map((inRound) => (inRound.get(`${mode}|on`)?.rate ?? NaN) / (inRound.get(`${mode}|off`)?.rate ?? NaN));
    const cpu = perRound.map((inRound) => (inRound.get(`${mode}|on`)?.cpuPerMessage ?? NaN) - (inRound.get(`${mode}|off`)?.cpuPerMessage ?? NaN));
    console.log(
      `${mode}: authentication on / off per round ${ratios.map((ratio) => `${fmt(ratio)}x`).join(' ')}, median ${fmt(percentile(ratios, 50))}x; ` +
        `server CPU the checks add per message ${cpu.map((ms) => fmt(ms, 3)).join(' ')} ms, median ${fmt(percentile(cpu, 50), 3)} ms`,
    );
  }
};

const memory = async (): Promise<void> => {
  const target = await startAgentpost('agentpost', { executable, greetingDelayMs: 0 });
  try {
    // Start-up's own quiet-time release runs 10 to 12.5 s after start, the native memory's 3 s
    // later; idle parse and search workers end 30 s after their last work.
    await sleep(15_000);
    const early = rssMb(target.pid);
    await sleep(30_000);
    const idle = rssMb(target.pid);
    const idleRss = idle.now;
    const sampler = sampleRss(target.pid);
    const started = performance.now();
    const { seconds } = await runLoad({ port: target.port, to: target.address, payloads: payloadsFor(target.address, 0, memoryCount), sessions, reuse: true });
    // The peak spans the delivery of what the burst queued, and "after" counts from its end.
    await target.drained();
    const deliveredSeconds = (performance.now() - started) / 1000;
    const peak = Math.max(sampler.stop(), rssMb(target.pid).peak);
    const stored = await target.stored();
    await sleep(afterSeconds * 1000);
    const afterSplit = rssMb(target.pid);
    const after = afterSplit.now;
    // Anonymous pages (heaps, C allocations) and file pages (the executable, the database's map) apart.
    const split = (rss: { anonymous: number; file: number }) => `anon ${fmt(rss.anonymous, 0)} + file ${fmt(rss.file, 0)}`;
    console.log(
      `memory (${executable ?? 'from source, tsx'}): RSS 15 s after start ${fmt(early.now, 0)} MB, idle (45 s after) ${fmt(idleRss, 0)} MB (target < 100), peak ${fmt(peak, 0)} MB during ${memoryCount} messages ` +
        `at ${fmt(memoryCount / seconds, 0)} msg/s, in mailboxes ${fmt(memoryCount / deliveredSeconds, 0)} msg/s (target < 200), ${fmt(after, 0)} MB ${afterSeconds} s after that (target < 150); ${stored} stored`,
    );
    console.log(`memory split: 15 s ${split(early)}, idle ${split(idle)}, highest sample ${split(sampler.highest())}, after ${split(afterSplit)} MB`);
  } finally {
    await target.stop();
  }
};

console.log(
  `bench:ingest  ${sessions} sessions, ${count} messages of ~${bytes} bytes per target and mode, ${rounds} round(s); ${executable ?? 'agentpost from source'}`,
);
console.log(`before: ${uptime()}`);
if (parts.has('rates')) await rates();
if (parts.has('tls')) await tls();
if (parts.has('connections')) await connections();
if (parts.has('memory')) await memory();
if (parts.has('pauses')) await pauses();
if (parts.has('threading')) await threading({ count: argValue('thread-count', 100_000), sessions, bytes, rounds, executable, sentence });
if (parts.has('authentication')) await authentication();
if (parts.has('trees')) await treesPart({ rounds, trees: stringArgs('tree'), measure, report });
if (parts.has('processes')) await processesPart({ rounds, count, sessions, executable, payloads: payloadsFor });
if (parts.has('domains')) await domainsPart({ count, sessions, rounds: argValue('domain-rounds', 3), executable, payloadsFor: payloadsTo });
if (parts.has('burst'))
  await burstPart({
    count: argValue('burst', 20_000),
    mailboxes: argValue('burst-mailboxes', 4),
    pollMs: argValue('burst-poll-ms', 50),
    sessions,
    rounds,
    executable,
    payloadsTo,
  });
console.log(`after: ${uptime()}`);
