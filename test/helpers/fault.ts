import { writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import Database from 'better-sqlite3';
import type { Test } from 'tap';
import { assertMatchesOpenApi } from './openapi.js';
import { runCommand, startServerProcess, type ServerProcess } from './process.js';
import { rssOf } from './rss.js';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
const agentpost = join(root, 'bin', 'agentpost');

/** The test runner's environment without any AGENTPOST_* variable. */
const cleanEnv = (): NodeJS.ProcessEnv => Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('AGENTPOST_')));

/** mulberry32: the suite's timings come from a printed seed, so a failing run can be replayed (FAULT_SEED). */
export const seededRandom = (seed: number): (() => number) => {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let x = state;
    x = Math.imul(x ^ (x >>> 15), x | 1);
    x ^= x + Math.imul(x ^ (x >>> 7), x | 61);
    return ((x ^ (x >>> 14)) >>> 0) / 4294967296;
  };
};

export const faultSeed = (): number => Number(process.env.FAULT_SEED ?? Date.now() % 1_000_000);

export const sleep = (ms: number): Promise<void> => new Promise((done) => setTimeout(done, ms));

/** One data folder and config file; `start` runs `agentpost serve` on it as a real process. */
export interface FaultServer {
  dataDir: string;
  dbPath: string;
  start(): Promise<ServerProcess>;
  /** The admin CLI on the same data folder. */
  cli(...args: string[]): Promise<string>;
}

export const faultServer = (t: Test, config: Record<string, unknown>): FaultServer => {
  const dir = t.testdir({});
  const dataDir = join(dir, 'data');
  const configFile = join(dir, 'agentpost.json');
  writeFileSync(configFile, JSON.stringify({ dataDir, ...config }));
  const args = ['--config', configFile, '--http-port', '0', '--smtp-port', '0', '--trust-proxy'];
  return {
    dataDir,
    dbPath: join(dataDir, 'agentpost.db'),
    start: () => startServerProcess(t, agentpost, ['serve', ...args], { env: cleanEnv() }),
    cli: async (...command) => {
      const result = await runCommand(agentpost, [...command, '--config', configFile], { env: cleanEnv() });
      if (result.code !== 0) throw new Error(`agentpost ${command.join(' ')} failed: ${result.stderr}`);
      return result.stdout;
    },
  };
};

/** kill -9, after reading the peak RSS (VmHWM) of the load phase that ends with it. */
export const killHard = async (server: ServerProcess): Promise<number | null> => {
  const peak = rssOf(server.child.pid as number)?.peakMb ?? null;
  await server.stop('SIGKILL');
  return peak;
};

/** Registers an agent (a distinct client address each, so the per-IP limit never bites). */
export const registerAgent = async (baseUrl: string, agentId: string, clientIp: string): Promise<{ email: string; apiKey: string }> => {
  const response = await fetch(`${baseUrl}/api/v1/agent/register`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-forwarded-for': clientIp },
    body: JSON.stringify({ agentId }),
  });
  const body = await response.json();
  assertMatchesOpenApi('POST', '/api/v1/agent/register', response.status, body);
  if (response.status !== 201) throw new Error(`register failed: ${response.status} ${JSON.stringify(body)}`);
  return body as { email: string; apiKey: string };
};

/** Opens the database the way the server left it (after kill -9 too: SQLite recovers the WAL). */
export const withDatabase = <T>(path: string, work: (db: Database.Database) => T): T => {
  const db = new Database(path);
  try {
    return work(db);
  } finally {
    db.close();
  }
};

export const integrityCheck = (db: Database.Database): string =>
  (db.prepare('PRAGMA integrity_check').all() as { integrity_check: string }[]).map((row) => row.integrity_check).join('; ');

export const summary = (peaks: (number | null)[]): string => peaks.map((mb) => (mb === null ? '?' : `${mb}`)).join(', ');

/**
 * What a load test did, for whoever runs `npm test`: tap's summary reporter hides comments,
 * so the line also goes to stderr, which tap passes through.
 */
export const report = (t: Test, line: string): void => {
  t.comment(line);
  process.stderr.write(`${line}\n`);
};
