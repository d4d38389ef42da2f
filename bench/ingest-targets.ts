import { spawn, type ChildProcess } from 'node:child_process';
import { generateKeyPairSync } from 'node:crypto';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { dkimSign } from '../src/smtp/outbound-message.js';
import { openDnsServer } from '../test/helpers/dns-server.js';
import { inboundDrained } from '../test/helpers/status.js';
import { tempDir } from './lib.js';
import { freePort, startPostfix, waitForPort } from './postfix.js';

/**
 * The servers bench:ingest loads, each in a process of its own so that its CPU and memory
 * are measured apart from the client's: agentpost (`agentpost serve`, from source or the
 * single executable), a bare smtp-server sink, and a private Postfix.
 */

export interface Target {
  name: string;
  port: number;
  /** Where mail goes; a mailbox for agentpost. */
  address: string;
  /** The process whose CPU and memory are read from /proc; none for Postfix (many processes). */
  pid?: number;
  /** Resolves once every accepted message is in its mailbox (agentpost queues a burst: src/services/mail/inbound.ts). */
  drained?(): Promise<void>;
  stop(): Promise<void>;
}

export interface Agentpost extends Target {
  pid: number;
  /** The HTTP listener, `http://127.0.0.1:port`. */
  baseUrl: string;
  imapPort: number;
  /** The key of `address`'s mailbox (its IMAP password). */
  apiKey: string;
  /** Mailboxes other than `address`, for idle IMAP sessions. */
  accounts: { email: string; apiKey: string }[];
  /** The config file it runs with, for admin commands beside it. */
  configFile: string;
  /** Messages in `address`'s INBOX. */
  stored(): Promise<number>;
  drained(): Promise<void>;
  /** The newest message's `trust` (absent with the checks off). */
  lastTrust(): Promise<string | undefined>;
}

const stopChild = async (child: ChildProcess): Promise<void> => {
  if (child.exitCode !== null || child.signalCode !== null) return;
  child.kill('SIGTERM');
  await new Promise((resolve) => child.once('exit', resolve));
};

/** The bench sender's DKIM key (example.org, selector bench): its record is what the DNS server below publishes. */
const senderKey = generateKeyPairSync('rsa', { modulusLength: 2048 });
const SENDER_DKIM = {
  domain: 'example.org',
  selector: 'bench',
  privateKeyPem: senderKey.privateKey.export({ type: 'pkcs8', format: 'pem' }) as string,
  record: `v=DKIM1; k=rsa; p=${senderKey.publicKey.export({ type: 'spki', format: 'der' }).toString('base64')}`,
};

/** A message signed as example.org's own server would (RFC 6376, rsa-sha256): it passes DKIM and DMARC here. */
export const signedBySender = (raw: Buffer): Promise<Buffer> => dkimSign(raw, SENDER_DKIM, { from: 'sender@example.org', to: ['bench@bench.test'] });

export interface AgentpostOptions {
  /** The single executable to run; from source (bin/main.ts with tsx) when unset. */
  executable?: string;
  greetingDelayMs?: number;
  /** Mailboxes made besides the one that receives the load. */
  accounts?: number;
  /** More settings for the config file (a section replaces the default one's keys it names). */
  config?: Record<string, Record<string, unknown>>;
  /** PEM files for `tls.cert` and `tls.key`: the MX offers STARTTLS. */
  tls?: { cert: string; key: string };
  /** `smtp.authenticationChecks`; the server's default (on) when unset. */
  authenticationChecks?: boolean;
  /** Changes the config just before it is written (a setting inside a section, e.g. smtp.hostname). */
  configure?: (config: Record<string, Record<string, unknown>>) => void;
  /**
   * Another source tree of agentpost to run (its bin/main.ts with tsx, from its own folder and
   * node_modules), as an older commit checked out: it gets only the settings every version has
   * had (data folder, ports, log level, the registration limit), so it starts whatever its age.
   */
  tree?: string;
  /** Node options for the server's process beside BENCH_SERVER_NODE_ARGS (bench:send profiles each server it starts). */
  nodeArgs?: string[];
}

/**
 * `agentpost serve --config FILE`: the single executable, or the source with tsx (from `cwd`,
 * another tree, when given). AGENTPOST_PARSE_THREADS, when set, reaches the server through the
 * environment; BENCH_SERVER_NODE_ARGS (say "--cpu-prof --cpu-prof-dir=/tmp/prof") reaches the
 * server's node only; BENCH_SERVER_STDOUT=1 shows its standard output (say, with "--trace-gc").
 */
const spawnServe = (configFile: string, options: { executable?: string; cwd?: string; env: NodeJS.ProcessEnv; nodeArgs?: string[] }): ChildProcess => {
  const nodeArgs = [...(process.env.BENCH_SERVER_NODE_ARGS ?? '').split(' ').filter(Boolean), ...(options.nodeArgs ?? [])];
  const command = options.executable ? [options.executable] : [process.execPath, ...nodeArgs, '--import', 'tsx', 'bin/main.ts'];
  return spawn(command[0], [...command.slice(1), 'serve', '--config', configFile], {
    stdio: ['ignore', process.env.BENCH_SERVER_STDOUT ? 'inherit' : 'ignore', 'inherit'],
    cwd: options.cwd,
    env: options.env,
  });
};

/** `agentpost serve` on free loopback ports in a temp folder, with one mailbox to load. */
export const startAgentpost = async (name: string, options: AgentpostOptions = {}): Promise<Agentpost> => {
  const dir = tempDir('agentpost-bench-ingest-');
  // Every received message is judged (SPF, DKIM, DMARC, ARC): a DNS server in this process
  // answers for the sender's domain, as a local caching resolver would beside a real MX, and
  // its CPU is not counted as the server's.
  const dns = await openDnsServer({
    'example.org': { TXT: ['v=spf1 ip4:127.0.0.1 -all'] },
    'bench._domainkey.example.org': { TXT: [SENDER_DKIM.record] },
    '_dmarc.example.org': { TXT: ['v=DMARC1; p=reject'] },
  });
  const [http, smtp, submission, imap] = [await freePort(), await freePort(), await freePort(), await freePort()];
  const configFile = join(dir.path, 'config.json');
  const config: Record<string, Record<string, unknown>> = options.tree
    ? {
        log: { level: 'warn' },
        http: { port: http, trustProxy: true },
        submission: { port: submission },
        imap: { port: imap },
        smtp: { port: smtp },
        limits: { registrationsPerIpPerHour: 100_000 },
      }
    : {
        log: { level: 'warn' },
        http: { port: http, trustProxy: true },
        // With a certificate the implicit-TLS ports listen too: on free ports.
        submission: { port: submission, tlsPort: 0 },
        imap: { port: imap, tlsPort: 0 },
        ...(options.tls && { tls: options.tls }),
        smtp: {
          port: smtp,
          ...(options.greetingDelayMs === undefined ? {} : { greetingDelayMs: options.greetingDelayMs }),
          ...(options.authenticationChecks === undefined ? {} : { authenticationChecks: options.authenticationChecks }),
        },
        limits: { registrationsPerIpPerHour: 100_000 },
        dns: { servers: dns.servers },
        ...options.config,
      };
  options.configure?.(config);
  writeFileSync(configFile, JSON.stringify({ dataDir: dir.path, ...config }));
  // Another tree gets the DNS server through the environment: a version that judges mail reads
  // it (without it, its checks would ask the machine's resolver), an older one ignores it.
  const env = options.tree ? { ...process.env, AGENTPOST_DNS_SERVERS: dns.servers.join(',') } : process.env;
  const child = spawnServe(configFile, { executable: options.executable, cwd: options.tree, env, nodeArgs: options.nodeArgs });
  const baseUrl = `http://127.0.0.1:${http}`;
  const register = async (agentId: string, i: number) => {
    const response = await fetch(`${baseUrl}/api/v1/agent/register`, {
      method: 'POST',
      body: JSON.stringify({ agentId }),
      headers: { 'content-type': 'application/json', 'user-agent': 'agentpost-bench/1.0', 'x-forwarded-for': `10.9.${i >> 8}.${i & 255}` },
    });
    if (response.status !== 201) throw new Error(`register: ${response.status} ${await response.text()}`);
    return (await response.json()) as { email: string; apiKey: string };
  };
  try {
    await Promise.all([waitForPort(http), waitForPort(smtp), waitForPort(imap)]);
    const target = await register('bench', 0);
    const newest = async () => {
      const response = await fetch(`${baseUrl}/api/v1/agent/inbox?limit=1`, {
        headers: { authorization: `Bearer ${target.apiKey}`, 'user-agent': 'agentpost-bench/1.0' },
      });
      return (await response.json()) as { totalMessages: number; emails: { trust?: string }[] };
    };
    const accounts = [];
    for (let i = 1; i <= (options.accounts ?? 0); i += 1) accounts.push(await register(`idle${i}`, i));
    return {
      name,
      port: smtp,
      imapPort: imap,
      address: target.email,
      apiKey: target.apiKey,
      configFile,
      pid: child.pid as number,
      accounts,
      baseUrl,
      stored: async () => (await newest()).totalMessages,
      drained: () => inboundDrained(baseUrl),
      lastTrust: async () => (await newest()).emails[0]?.trust,
      stop: async () => {
        await stopChild(child);
        await dns.close();
        dir.remove();
      },
    };
  } catch (error) {
    await stopChild(child);
    await dns.close();
    dir.remove();
    throw error;
  }
};

/** A node of a service on a data folder another process serves too: its own listeners and node id. */
export interface Beside {
  pid: number;
  port: number;
  imapPort: number;
  baseUrl: string;
  stop(): Promise<void>;
}

/**
 * `agentpost serve` with `config` (which names the shared data folder) on listeners of its own
 * and node id `nodeId`, so that it and the process already there are one service
 * (docs/design.md, "Several processes on one store").
 */
export const serveBeside = async (config: Record<string, unknown>, configFile: string, nodeId: string, executable?: string): Promise<Beside> => {
  const listener = (key: string) => (config[key] ?? {}) as Record<string, unknown>;
  const [http, smtp, submission, imap] = [await freePort(), await freePort(), await freePort(), await freePort()];
  const own = {
    ...config,
    http: { ...listener('http'), port: http },
    smtp: { ...listener('smtp'), port: smtp },
    submission: { ...listener('submission'), port: submission },
    imap: { ...listener('imap'), port: imap },
  };
  writeFileSync(configFile, JSON.stringify(own));
  const child = spawnServe(configFile, { executable, env: { ...process.env, AGENTPOST_NODE_ID: nodeId } });
  try {
    await Promise.all([waitForPort(http), waitForPort(smtp)]);
  } catch (error) {
    await stopChild(child);
    throw error;
  }
  return { pid: child.pid as number, port: smtp, imapPort: imap, baseUrl: `http://127.0.0.1:${http}`, stop: () => stopChild(child) };
};

/**
 * A second `agentpost serve` on `first`'s data folder: the same config with listeners of its
 * own and its own node id, so the two are one service. Stopped before `first`, which removes
 * the folder.
 */
export const startAgentpostBeside = async (
  first: Agentpost,
  nodeId: string,
  executable?: string,
): Promise<Target & { pid: number; baseUrl: string; imapPort: number }> => {
  const config = JSON.parse(readFileSync(first.configFile, 'utf8')) as Record<string, unknown>;
  const beside = await serveBeside(config, `${first.configFile.replace(/\.json$/, '')}-${nodeId}.json`, nodeId, executable);
  return {
    ...beside,
    name: `${first.name} + ${nodeId}`,
    address: first.address,
    drained: () => inboundDrained(beside.baseUrl),
  };
};

/** The bare smtp-server sink (bench/sink-server.ts): the protocol alone, nothing stored. */
export const startSink = async (): Promise<Target> => {
  const child = spawn(process.execPath, ['--import', 'tsx', 'bench/sink-server.ts'], { stdio: ['ignore', 'pipe', 'inherit'] });
  const port = await new Promise<number>((resolve, reject) => {
    child.stdout?.once('data', (chunk: Buffer) => resolve(Number(chunk.toString().trim())));
    child.once('exit', (code) => reject(new Error(`sink exited with ${code}`)));
  });
  return { name: 'sink', port, address: 'sink@bench.test', pid: child.pid as number, stop: () => stopChild(child) };
};

/**
 * Postfix accepting mail for any address from loopback into its hold queue: each message is
 * written and fsynced to the queue before 250, as Postfix always does, and then stays there
 * (no delivery competes for the CPU). in_flow_delay is off: held mail never reaches the
 * queue manager, whose pace would otherwise slow every message by up to a second.
 */
export const startPostfixTarget = async (): Promise<Target> => {
  const postfix = await startPostfix(['relayhost=[127.0.0.1]:9', 'smtpd_end_of_data_restrictions=check_client_access static:HOLD', 'in_flow_delay=0s']);
  return { name: 'postfix', port: postfix.port, address: 'bench@agents.localhost', stop: async () => postfix.stop() };
};
