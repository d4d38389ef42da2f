import type { Test } from 'tap';
import { loadConfig } from '../../src/config/load.js';
import type { ConfigLayer } from '../../src/config/types.js';
import type { AddressResolver } from '../../src/core/address-resolver.js';
import type { DnsResolver } from '../../src/core/dns.js';
import type { Clock } from '../../src/core/clock.js';
import type { MxResolver } from '../../src/core/outbound.js';
import { createLogger, type Logger } from '../../src/core/logger.js';
import type { QueueName } from '../../src/app/queues.js';
import { createApp, type App } from '../../src/main.js';
import type { ParseWorkerFactory } from '../../src/workers/parse-pool.js';
import type { AuthWorkerFactory } from '../../src/workers/auth-client.js';
import type { SearchWorkerFactory } from '../../src/workers/search-writer.js';
import { startDnsServer, type TestDnsServer } from './dns-server.js';
import { assertMatchesOpenApi } from './openapi.js';
import { copyMigratedStore } from './store-template.js';
import { bundledWorkers } from './workers.js';

export interface ApiResponse<T = any> {
  status: number;
  headers: Headers;
  body: T;
}

export interface RequestOptions {
  key?: string;
  body?: unknown;
  headers?: Record<string, string>;
}

export interface TestApp {
  app: App;
  baseUrl: string;
  /**
   * The authoritative DNS server on loopback that `dns.servers` points at unless the test set
   * its own (then null): no test asks a real resolver. Serve records with `dns.set(...)`.
   */
  dns: TestDnsServer | null;
  smtpPort: number;
  /** SMTP submission (AUTH with the mailbox address and the full key). */
  submissionPort: number;
  imapPort: number;
  /** A REST call whose response is checked against the OpenAPI document. */
  api<T = any>(method: string, path: string, options?: RequestOptions): Promise<ApiResponse<T>>;
  /** Registers an agent and returns its address and key. */
  register(agentId?: string): Promise<{ email: string; apiKey: string; userId: string }>;
}

/**
 * Starts the real app on port 0 in a temp folder; stopped when the test ends. Remote delivery
 * runs only when a test calls `app.queues.delivery.runOnce()`, or with `autoDeliver: true`;
 * `manual` names other queues that run only when the test says so (src/runtime/queue-runner.ts).
 */
export const startApp = async (
  t: Test,
  overrides: ConfigLayer = {},
  options: {
    clock?: Clock;
    dns?: DnsResolver;
    authWorker?: AuthWorkerFactory;
    resolver?: MxResolver;
    autoDeliver?: boolean;
    manual?: readonly QueueName[];
    addressResolver?: AddressResolver;
    parseWorker?: ParseWorkerFactory;
    /** null: the index is written on the main thread. */
    searchWorker?: SearchWorkerFactory | null;
    /** Default: a silent one. */
    logger?: Logger;
    tlsPollMs?: number;
    acmePollMs?: number;
    mtaStsPort?: number;
    rankSampleSpacing?: number;
  } = {},
): Promise<TestApp> => {
  const ownDataDir = typeof overrides.dataDir !== 'string';
  const dataDir = typeof overrides.dataDir === 'string' ? overrides.dataDir : t.testdir({});
  // A fresh folder gets an already migrated, empty store (./store-template.ts).
  if (ownDataDir) await copyMigratedStore(dataDir);
  const dns = overrides.dns === undefined && !options.dns ? await startDnsServer(t) : null;
  const config = loadConfig({
    overrides: deepMerge(
      {
        dataDir,
        http: { port: 0, trustProxy: true },
        // A cold parse on a loaded test machine must not be cut off; the budget's own tests set theirs.
        smtp: { port: 0, parseTimeoutMs: 30_000 },
        submission: { port: 0, tlsPort: 0 },
        imap: { port: 0, tlsPort: 0 },
        log: { level: 'silent' },
        ...(dns ? { dns: { servers: dns.servers } } : {}),
      },
      overrides,
    ),
  });
  const threads = await bundledWorkers();
  const app = createApp(config, {
    clock: options.clock,
    dns: options.dns,
    resolver: options.resolver,
    addressResolver: options.addressResolver,
    logger: options.logger ?? createLogger('silent', () => {}),
    tlsPollMs: options.tlsPollMs,
    acmePollMs: options.acmePollMs,
    mtaStsPort: options.mtaStsPort,
    rankSampleSpacing: options.rankSampleSpacing,
    // The real threads' code, as bin/main.ts starts it (smtp.parseThreads decides how many parse
    // threads), bundled by esbuild so that no thread loads tsx or tap's preloads (./threads.ts).
    parseWorker: options.parseWorker ?? threads.parseWorker,
    searchWorker: options.searchWorker === null ? undefined : (options.searchWorker ?? threads.searchWorker),
    authWorker: options.authWorker ?? threads.authWorker,
  });
  const manual = [...(options.manual ?? []), ...(options.autoDeliver ? [] : (['delivery'] as const))];
  for (const name of manual) app.queues[name].driveManually();
  await app.start();
  t.teardown(() => app.stop());
  const api = async <T>(method: string, path: string, options: RequestOptions = {}): Promise<ApiResponse<T>> => {
    const headers: Record<string, string> = { 'user-agent': 'agentpost-tests/1.0', ...options.headers };
    if (options.key) headers.authorization = `Bearer ${options.key}`;
    if (options.body !== undefined) headers['content-type'] ??= 'application/json';
    const response = await fetch(app.baseUrl + path, {
      method,
      headers,
      body: options.body === undefined ? undefined : typeof options.body === 'string' ? options.body : JSON.stringify(options.body),
    });
    const text = await response.text();
    const body = text === '' ? undefined : (JSON.parse(text) as T);
    assertMatchesOpenApi(method, path, response.status, body);
    return { status: response.status, headers: response.headers, body: body as T };
  };
  let registered = 0;
  const register = async (agentId = `agent${(registered += 1)}`) => {
    const response = await api('POST', '/api/v1/agent/register', { body: { agentId }, headers: { 'x-forwarded-for': `10.0.0.${registered}` } });
    if (response.status !== 201) throw new Error(`register failed: ${response.status} ${JSON.stringify(response.body)}`);
    return response.body as { email: string; apiKey: string; userId: string };
  };
  return { app, baseUrl: app.baseUrl, dns, smtpPort: app.ports.smtp, submissionPort: app.ports.submission, imapPort: app.ports.imap, api, register };
};

const deepMerge = (base: ConfigLayer, over: ConfigLayer): ConfigLayer => {
  const out: ConfigLayer = { ...base };
  for (const [key, value] of Object.entries(over)) {
    const current = out[key];
    const bothObjects = [current, value].every((item) => typeof item === 'object' && item !== null && !Array.isArray(item));
    out[key] = bothObjects ? deepMerge(current as ConfigLayer, value as ConfigLayer) : value;
  }
  return out;
};
