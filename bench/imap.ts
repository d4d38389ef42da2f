/**
 * `npm run bench:imap`: agentpost against Dovecot 2.3 on this machine in the same run, with the
 * same raw client and the same 10,000 messages in INBOX (APPENDed over IMAP to both, 5% with
 * a marker word). Per round, a new session on each server times: the initial sync (SELECT
 * INBOX + UID FETCH 1:* (FLAGS ENVELOPE BODYSTRUCTURE RFC822.SIZE)), a full-body fetch of
 * 1,000 messages, UID SEARCH TEXT of the marker, and SEARCH FROM / SINCE and STORE 1:* as
 * the issue's table has them. /healthz is probed every 10 ms during agentpost's sync; the RSS
 * of each server (Dovecot: all its processes) is read after the sync. The servers run in
 * processes of their own (bench/ingest-targets.ts, test/helpers/dovecot.ts).
 * Prints every round, the median and spread, and Dovecot's time over agentpost's (the target
 * is at least 1.0x), and the same for the CPU each server spent (from /proc, all its threads
 * and processes), which a busy machine distorts less than wall time. Each server first runs
 * `--warmup` untimed rounds. Options: --messages N (10000), --rounds N (3), --warmup N (1), --bodies N (1000),
 * --no-dovecot (agentpost alone, for profiling), --tree NAME=DIR (also agentpost from another
 * source tree, say main's worktree, in the same run; repeatable), --executable NAME=PATH (also
 * agentpost from a single executable, as dist/agentpost builds it, on Node 24; repeatable). The same mailbox is also read
 * through a second `agentpost serve` on the data folder ("agentpost, second process").
 */
import { loadavg } from 'node:os';
import { performance } from 'node:perf_hooks';
import { Worker } from 'node:worker_threads';
import { startDovecot } from '../test/helpers/dovecot.js';
import { BenchImap, fetchCount, searchHits, treeCpuMs, treeRssMb } from './imap-client.js';
import { startAgentpost, startAgentpostBeside } from './ingest-targets.js';
import { argValue, fmt, hasFlag, messageOfSize, percentile, prng, stringArgs, vocabulary } from './lib.js';
import { cpuMs, rssMb } from './proc.js';

const messages = argValue('messages', 10_000);
const rounds = argValue('rounds', 3);
const bodies = Math.min(messages, argValue('bodies', 1000));
const warmup = argValue('warmup', 1);
const MARKER = 'zorblaxite';
const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];

interface Server {
  name: string;
  port: number;
  login: string;
  /** Resident memory now, as printed. */
  rss(): string;
  /** CPU the server has used so far (all its threads and processes), in ms. */
  cpu(): number;
  /** agentpost's /healthz, probed during the sync. */
  probe?: HealthProbe;
  /** False for a second process on another's data folder: it serves the mailbox the first filled. */
  fills?: false;
}

/** An IMAP date-time (RFC 3501 section 9, date-time) `minutes` after 1 March 2026. */
const internalDate = (minutes: number): string => {
  const date = new Date(Date.UTC(2026, 2, 1) + minutes * 60_000);
  const pad = (value: number) => String(value).padStart(2, '0');
  return `${pad(date.getUTCDate())}-${MONTHS[date.getUTCMonth()]}-${date.getUTCFullYear()} ${pad(date.getUTCHours())}:${pad(date.getUTCMinutes())}:00 +0000`;
};

/** The same messages for both servers: about 2-6 KB of text, every 20th with the marker, one in 3 \Seen. */
const corpus = (): Buffer[] => {
  const random = prng(7);
  const { sentence } = vocabulary(5000, random);
  return Array.from({ length: messages }, (_, index) => {
    const message = messageOfSize(index, 'bench@example.net', 2048 + Math.floor(random() * 4096), sentence);
    return index % 20 === 0 ? Buffer.concat([message, Buffer.from(`the ${MARKER} line\r\n`)]) : message;
  });
};

/** APPENDs with LITERAL+ (RFC 7888), 250 in flight at a time. */
const fill = async (server: Server, mail: Buffer[]): Promise<number> => {
  const client = await BenchImap.open(server.port);
  await client.command(server.login);
  const started = performance.now();
  for (let from = 0; from < mail.length; from += 250) {
    let last = '';
    const batch = mail.slice(from, from + 250);
    for (const [offset, message] of batch.entries()) {
      last = client.tag();
      const flags = (from + offset) % 3 === 0 ? '(\\Seen) ' : '';
      client.write(
        Buffer.concat([Buffer.from(`${last} APPEND INBOX ${flags}"${internalDate(from + offset)}" {${message.length}+}\r\n`), message, Buffer.from('\r\n')]),
      );
    }
    const answer = (await client.answer(last)).toString('latin1');
    const ok = answer.match(/^b\d+ OK/gm)?.length ?? 0;
    if (ok !== batch.length) throw new Error(`${server.name}: ${batch.length - ok} APPENDs refused: ${answer.slice(0, 300)}`);
  }
  const seconds = (performance.now() - started) / 1000;
  // The search index catches up a moment after mail is stored: wait until it has every marker.
  await client.command('EXAMINE INBOX');
  for (let i = 0; i < 600 && searchHits(await client.command(`UID SEARCH TEXT ${MARKER}`)) < Math.ceil(messages / 20); i += 1) {
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  client.close();
  return seconds;
};

/**
 * /healthz one request at a time, 10 ms apart, between start() and stop(); the latencies in ms.
 * The probe runs on a thread of its own, made and warmed once per server: on the bench's main
 * thread it would also wait for the IMAP client parsing the server's answer, and a thread made
 * per round would count its own start (loading fetch, the first connection) against the server.
 */
class HealthProbe {
  private constructor(private readonly worker: Worker) {}

  static async open(baseUrl: string): Promise<HealthProbe> {
    const worker = new Worker(
      `const { parentPort, workerData } = require('node:worker_threads');
       const probe = async () => {
         const started = performance.now();
         const response = await fetch(workerData + '/healthz', { headers: { 'user-agent': 'agentpost-bench/1.0' } });
         await response.arrayBuffer();
         return performance.now() - started;
       };
       let running = false;
       parentPort.on('message', async (command) => {
         if (command === 'stop') return void (running = false);
         running = true;
         const samples = [];
         while (running) {
           samples.push(await probe());
           await new Promise((resolve) => setTimeout(resolve, 10));
         }
         parentPort.postMessage(samples);
       });
       probe().then(() => parentPort.postMessage('ready'));`,
      { eval: true, workerData: baseUrl },
    );
    await new Promise((resolve, reject) => {
      worker.once('message', resolve);
      worker.once('error', reject);
    });
    return new HealthProbe(worker);
  }

  start(): void {
    this.worker.postMessage('start');
  }

  stop(): Promise<number[]> {
    const samples = new Promise<number[]>((resolve) => this.worker.once('message', resolve));
    this.worker.postMessage('stop');
    return samples;
  }

  close(): Promise<number> {
    return this.worker.terminate();
  }
}

interface Operation {
  label: string;
  run(client: BenchImap): Promise<Buffer>;
  /** What a right answer holds, checked after the clock stops. */
  expect(answer: Buffer): string | null;
  /** Undone after timing, untimed, so every round starts from the same state. */
  undo?: (client: BenchImap) => Promise<unknown>;
}

const expectCount = (what: string, got: number, want: number): string | null => (got === want ? null : `${what}: ${got}, expected ${want}`);

const operations = (): Operation[] => {
  const first = Math.floor((messages - bodies) / 2) + 1;
  return [
    {
      label: `initial sync (SELECT + UID FETCH 1:* FLAGS ENVELOPE BODYSTRUCTURE RFC822.SIZE), ${messages}`,
      run: async (client) => (await client.command('SELECT INBOX'), client.command('UID FETCH 1:* (FLAGS ENVELOPE BODYSTRUCTURE RFC822.SIZE)')),
      expect: (answer) => expectCount('FETCH responses', fetchCount(answer), messages),
    },
    {
      label: `UID FETCH BODY.PEEK[] of ${bodies}`,
      run: (client) => client.command(`UID FETCH ${first}:${first + bodies - 1} (BODY.PEEK[])`),
      expect: (answer) => expectCount('FETCH responses', fetchCount(answer), bodies),
    },
    {
      label: `UID SEARCH TEXT (a word in 5%)`,
      run: (client) => client.command(`UID SEARCH TEXT ${MARKER}`),
      expect: (answer) => expectCount('hits', searchHits(answer), Math.ceil(messages / 20)),
    },
    {
      label: 'UID SEARCH FROM',
      run: (client) => client.command('UID SEARCH FROM sender3@example.org'),
      expect: (answer) => expectCount('hits', searchHits(answer), Math.ceil((messages - 3) / 97)),
    },
    {
      label: 'UID SEARCH SINCE (the last third)',
      run: (client) => client.command(`UID SEARCH SINCE ${internalDate(Math.floor((messages * 2) / 3)).split(' ')[0]}`),
      expect: (answer) => (searchHits(answer) > 0 ? null : 'no hits'),
    },
    {
      label: 'UID STORE 1:* +FLAGS.SILENT (\\Flagged)',
      run: (client) => client.command('UID STORE 1:* +FLAGS.SILENT (\\Flagged)'),
      expect: () => null,
      undo: (client) => client.command('UID STORE 1:* -FLAGS.SILENT (\\Flagged)'),
    },
  ];
};

interface Round {
  seconds: number[];
  cpuMs: number[];
  healthz: number[];
  rss: string;
}

/**
 * The bench's own full collection, untimed, before each timed command (npm's bench:imap runs
 * with --expose-gc). Without it this process's mark-compacts, set off by the megabytes of
 * answers it keeps, paused it 10 to 30 ms inside timed commands of either server at random:
 * a BODY.PEEK[] whose last byte arrived at 13 ms was timed at 32 ms.
 */
const collectGarbage = (): void => (globalThis as { gc?: () => void }).gc?.();

/** One round on one server: a new session, each operation timed in turn. */
const round = async (server: Server, ops: Operation[]): Promise<Round> => {
  const client = await BenchImap.open(server.port);
  await client.command(server.login);
  const seconds: number[] = [];
  const cpu: number[] = [];
  let healthz: number[] = [];
  let rss = '';
  for (const [index, op] of ops.entries()) {
    collectGarbage();
    const probe = index === 0 ? server.probe : undefined;
    probe?.start();
    const [started, cpuBefore] = [performance.now(), server.cpu()];
    const answer = await op.run(client);
    seconds.push((performance.now() - started) / 1000);
    cpu.push(server.cpu() - cpuBefore);
    if (probe) healthz = await probe.stop();
    if (index === 0) rss = server.rss();
    const wrong = op.expect(answer);
    if (wrong) throw new Error(`${server.name}, ${op.label}: ${wrong}`);
    await op.undo?.(client);
  }
  await client.command('LOGOUT').catch(() => undefined);
  client.close();
  return { seconds, cpuMs: cpu, healthz, rss };
};

const spread = (values: number[]): string => `${fmt(percentile(values, 50), 3)} s (${fmt(Math.min(...values), 3)}-${fmt(Math.max(...values), 3)})`;

const report = (ops: Operation[], results: Map<string, Round[]>): void => {
  const theirs = results.get('Dovecot') ?? [];
  for (const [name, ours] of [...results].filter(([name]) => name !== 'Dovecot')) {
    console.log(`\n-- ${name}: median of the rounds (min-max); x = Dovecot time / ${name} time, target >= 1.0`);
    for (const [index, op] of ops.entries()) {
      const a = ours.map((entry) => entry.seconds[index]);
      const d = theirs.map((entry) => entry.seconds[index]);
      const ratio = d.length > 0 ? `${fmt(percentile(d, 50) / percentile(a, 50))}x` : 'n/a';
      console.log(`${op.label}\n    ${name} ${spread(a)}   Dovecot ${d.length > 0 ? spread(d) : 'skipped'}   ${ratio}`);
      const [ac, dc] = [ours.map((entry) => entry.cpuMs[index]), theirs.map((entry) => entry.cpuMs[index])];
      console.log(
        `    server CPU: ${name} ${fmt(percentile(ac, 50), 0)} ms   Dovecot ${dc.length > 0 ? `${fmt(percentile(dc, 50), 0)} ms   ${fmt(percentile(dc, 50) / Math.max(1, percentile(ac, 50)))}x` : 'skipped'}`,
      );
    }
    const health = ours.flatMap((entry) => entry.healthz);
    console.log(
      `/healthz during ${name}'s syncs: ${health.length} probes, p50 ${fmt(percentile(health, 50))} ms, p99 ${fmt(percentile(health, 99))} ms, max ${fmt(Math.max(...health))} ms (target p99 < 50 ms)`,
    );
    console.log(`RSS after the sync: ${name} ${ours.map((entry) => entry.rss).join(', ')}`);
  }
  console.log(`RSS after the sync: Dovecot ${theirs.map((entry) => entry.rss).join(', ') || 'skipped'}`);
};

const main = async (): Promise<void> => {
  console.log(
    `bench:imap  ${messages} messages, ${rounds} rounds, load ${loadavg()
      .map((v) => fmt(v))
      .join(' ')}`,
  );
  const teardowns: (() => unknown)[] = [];
  const servers: Server[] = [];
  try {
    // --tree NAME=DIR (repeatable): agentpost from other source trees too, in the same run.
    const named = (flag: string) => stringArgs(flag).map((spec): [string, string] => [`agentpost ${spec.split('=')[0]}`, spec.slice(spec.indexOf('=') + 1)]);
    const variants: [string, { tree?: string; executable?: string }][] = [
      ['agentpost', {}],
      ...named('tree').map(([name, tree]): [string, { tree: string }] => [name, { tree }]),
      ...named('executable').map(([name, executable]): [string, { executable: string }] => [name, { executable }]),
    ];
    for (const [name, variant] of variants) {
      const { tree, executable } = variant;
      const agentpost = await startAgentpost(name, { tree, executable });
      teardowns.push(() => agentpost.stop());
      const probe = await HealthProbe.open(agentpost.baseUrl);
      teardowns.push(() => probe.close());
      servers.push({
        name,
        port: agentpost.imapPort,
        login: `LOGIN "${agentpost.address}" "${agentpost.apiKey}"`,
        probe,
        rss: () => ((rss) => `${fmt(rss.now, 0)} MB (anonymous ${fmt(rss.anonymous, 0)}, file ${fmt(rss.file, 0)})`)(rssMb(agentpost.pid)),
        cpu: () => cpuMs(agentpost.pid),
      });
      if (tree !== undefined || executable !== undefined) continue;
      // The same mailbox through a second process on the data folder (docs/design.md, "Several
      // processes on one store"): what a client meets on another node of the service.
      const beside = await startAgentpostBeside(agentpost, 'node-b');
      teardowns.push(() => beside.stop());
      servers.push({
        name: 'agentpost, second process',
        port: beside.imapPort,
        login: `LOGIN "${agentpost.address}" "${agentpost.apiKey}"`,
        rss: () => ((rss) => `${fmt(rss.now, 0)} MB (anonymous ${fmt(rss.anonymous, 0)}, file ${fmt(rss.file, 0)})`)(rssMb(beside.pid)),
        cpu: () => cpuMs(beside.pid),
        fills: false,
      });
    }
    const dovecot = hasFlag('no-dovecot') ? { skip: '--no-dovecot' } : await startDovecot({ teardown: (fn: () => unknown) => teardowns.push(fn) } as never);
    if ('skip' in dovecot) console.log(`Dovecot skipped: ${dovecot.skip}`);
    else {
      console.log(`Dovecot ${dovecot.version}`);
      servers.push({
        name: 'Dovecot',
        port: dovecot.port,
        login: `LOGIN ${dovecot.user} ${dovecot.password}`,
        rss: () => ((tree) => `${fmt(tree.mb, 0)} MB (${tree.processes} processes)`)(treeRssMb(dovecot.pid)),
        cpu: () => treeCpuMs(dovecot.pid),
      });
    }
    const mail = corpus();
    for (const server of servers) if (server.fills !== false) console.log(`${server.name}: ${messages} APPENDs in ${fmt(await fill(server, mail), 1)} s`);
    const ops = operations();
    // One untimed round per server first, as bench:ingest warms its targets: the first sync of a
    // process that has served none runs code V8 has not optimized yet (350 ms of CPU against
    // 60 to 110 later) and Dovecot's first reads its files cold. A mail server serves many
    // sessions; what a client meets is a server that has run these commands before.
    for (let r = 0; r < warmup; r += 1) for (const server of servers) await round(server, ops);
    const results = new Map<string, Round[]>();
    for (let r = 0; r < rounds; r += 1) {
      // Alternate which server goes first, so neither always meets the other's leftovers.
      for (const server of r % 2 === 0 ? servers : [...servers].reverse()) {
        const result = await round(server, ops);
        results.set(server.name, [...(results.get(server.name) ?? []), result]);
        console.log(
          `round ${r + 1} ${server.name.padEnd(9)} ${result.seconds.map((value) => fmt(value, 3)).join(' / ')} s (server CPU ${result.cpuMs.map((value) => fmt(value, 0)).join(' / ')} ms); RSS after the sync ${result.rss}` +
            (result.healthz.length > 0 ? `; /healthz p99 ${fmt(percentile(result.healthz, 99))} ms` : ''),
        );
      }
    }
    report(ops, results);
    console.log(
      `load after ${loadavg()
        .map((v) => fmt(v))
        .join(' ')}`,
    );
  } finally {
    for (const teardown of teardowns.reverse()) await teardown();
  }
};

await main();
