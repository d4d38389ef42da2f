import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { openDnsServer } from '../test/helpers/dns-server.js';
import { emptyOutcome, tally, type CorpusMessage, type Outcome } from './junk-corpus.js';
import { familyCpuMs } from './junk-spamassassin.js';
import { freePort, waitForPort } from './postfix.js';
import { cpuMs } from './proc.js';

/** rspamd 3 (Debian's `rspamd`): its rules and its Bayes classifier (on Redis, its default backend), network tests off. */
export const rspamdVersion = (): string | null =>
  existsSync('/usr/bin/rspamd') ? (/version (\S+)/.exec(execFileSync('rspamd', ['--version']).toString())?.[1] ?? 'unknown') : null;

/**
 * Modules that ask the network (DNS lists, SPF, DKIM, DMARC, ARC, fuzzy hashes, the HELO and
 * MX checks, URL redirects, rule updates) or learn from traffic by themselves (greylisting,
 * rate limits, reputation, replies, neural): off, as SpamAssassin's network tests are.
 */
const OFF = [
  'rbl',
  'surbl',
  'spf',
  'dkim',
  'dmarc',
  'arc',
  'hfilter',
  'fuzzy_check',
  'dcc',
  'asn',
  'mx_check',
  'emails',
  'greylist',
  'ratelimit',
  'replies',
  'reputation',
  'neural',
  'url_redirector',
  'rspamd_update',
  'external_services',
  'antivirus',
  'history_redis',
];

/** What /checkv2 answers; spam is an action that marks or refuses the message. */
interface Checked {
  score: number;
  action: string;
  symbols?: Record<string, unknown>;
}

export interface RspamdFold {
  /** Learn answers by HTTP status: 200 learned, 204 declined. */
  learned: Map<number, number>;
  /** Test messages whose verdict had a Bayes symbol (BAYES_SPAM or BAYES_HAM). */
  withBayes: number;
  /** Spam when rspamd adds its spam header or refuses (score 6 by default): where mail lands in Junk. */
  addHeader: Outcome;
  /** Spam from its greylist threshold up (score 4 by default): the most generous reading. */
  greylist: Outcome;
}

const write = (path: string, text: string): void => writeFileSync(path, `${text}\n`);

const configure = (dir: string, ports: { normal: number; controller: number; redis: number; dns: string }): string => {
  const local = join(dir, 'local.d');
  mkdirSync(local, { recursive: true });
  for (const module of OFF) write(join(local, `${module}.conf`), 'enabled = false;');
  write(join(local, 'redis.conf'), `servers = "127.0.0.1:${ports.redis}";`);
  const top = join(dir, 'rspamd.conf');
  write(
    top,
    [
      '.include "$CONFDIR/common.conf"',
      `options { pidfile = "${dir}/rspamd.pid"; .include "$CONFDIR/options.inc" dns { nameserver = ["${ports.dns}"]; timeout = 0.5s; retransmits = 1; } }`,
      `logging { type = "file"; filename = "${dir}/rspamd.log"; level = "warning"; }`,
      `worker "normal" { .include "$CONFDIR/worker-normal.inc" bind_socket = "127.0.0.1:${ports.normal}"; count = 2; }`,
      `worker "controller" { .include "$CONFDIR/worker-controller.inc" bind_socket = "127.0.0.1:${ports.controller}"; }`,
    ].join('\n'),
  );
  return top;
};

const stop = async (child: ChildProcess): Promise<void> => {
  if (child.exitCode !== null) return;
  child.kill('SIGTERM');
  await new Promise((resolve) => child.once('exit', resolve));
};

const post = async (url: string, body: Buffer, statuses?: Map<number, number>): Promise<unknown> => {
  const response = await fetch(url, { method: 'POST', body: new Uint8Array(body) });
  statuses?.set(response.status, (statuses.get(response.status) ?? 0) + 1);
  const text = await response.text();
  // 204: rspamd declined to learn the message (its learn condition, or too few tokens); 208: learned already.
  if (response.status < 200 || response.status > 299) throw new Error(`${url}: ${response.status} ${text.slice(0, 200)}`);
  return text.startsWith('{') ? JSON.parse(text) : text;
};

/** Runs `work` on every message, `lanes` at a time. */
const eachOf = async (messages: readonly CorpusMessage[], lanes: number, work: (message: CorpusMessage) => Promise<void>): Promise<void> => {
  const queue = [...messages];
  await Promise.all(
    Array.from({ length: lanes }, async () => {
      for (let message = queue.shift(); message; message = queue.shift()) await work(message);
    }),
  );
};

/** rspamd with its own Redis and configuration in `dir`, DNS pointed at a loopback server that knows no name. */
export const startRspamd = async (dir: string) => {
  const dns = await openDnsServer();
  const ports = { normal: await freePort(), controller: await freePort(), redis: await freePort(), dns: dns.servers[0] };
  const redis = spawn('redis-server', ['--port', String(ports.redis), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', '--dir', dir], {
    stdio: 'ignore',
  });
  const config = configure(dir, ports);
  // Its local.d, databases, pid file and log all in `dir`; /etc/rspamd gives the rest.
  const vars = ['LOCAL_CONFDIR', 'DBDIR', 'RUNDIR', 'LOGDIR'].flatMap((name) => ['--var', `${name}=${dir}`]);
  const rspamd = spawn('rspamd', ['-f', '-i', '-u', 'root', '-g', 'root', '-c', config, ...vars], { stdio: 'ignore' });
  await Promise.all([waitForPort(ports.redis), waitForPort(ports.normal), waitForPort(ports.controller)]);
  const base = (port: number) => `http://127.0.0.1:${port}`;
  const flush = () => execFileSync('redis-cli', ['-p', String(ports.redis), 'FLUSHALL']);
  return {
    /** One fold: Bayes emptied, learned from the training messages, then the test messages checked, two at a time. */
    fold: async (training: readonly CorpusMessage[], testing: readonly CorpusMessage[]): Promise<RspamdFold> => {
      flush();
      const learned = new Map<number, number>();
      await eachOf(
        training,
        4,
        async (message) => void (await post(`${base(ports.controller)}/${message.spam ? 'learnspam' : 'learnham'}`, message.raw, learned)),
      );
      const result: RspamdFold = { learned, withBayes: 0, addHeader: emptyOutcome(), greylist: emptyOutcome() };
      const before = familyCpuMs(rspamd.pid as number) + cpuMs(redis.pid as number);
      await eachOf(testing, 2, async (message) => {
        const checked = (await post(`${base(ports.normal)}/checkv2`, message.raw)) as Checked;
        tally(result.addHeader, message.spam, ['add header', 'rewrite subject', 'reject'].includes(checked.action));
        tally(result.greylist, message.spam, checked.action !== 'no action');
        if (Object.keys(checked.symbols ?? {}).some((symbol) => symbol.startsWith('BAYES_'))) result.withBayes += 1;
      });
      const cpu = familyCpuMs(rspamd.pid as number) + cpuMs(redis.pid as number) - before;
      result.addHeader.cpuMs = cpu;
      result.greylist.cpuMs = cpu;
      return result;
    },
    stop: async () => {
      await stop(rspamd);
      await stop(redis);
      await dns.close();
    },
  };
};
