/**
 * The app's worker threads (parse, search, authentication) for startApp: the same thread
 * files as src/workers/threads/*-source.ts start, bundled once per test process by esbuild
 * (as scripts/package.mjs bundles them for the executable) and started as plain JavaScript.
 *
 * Why: a thread started from source registers tsx itself (source-thread.ts), and on Node 20
 * `register()` starts a loader-hooks thread that loads tsx and esbuild again: about 0.45 s of
 * CPU per thread before the thread's own code runs, and startApp starts two (parse, search);
 * a worker also inherits tap's preloads (see withoutPreloads).
 * The bundle holds only this repository's code; every package is imported from node_modules
 * by the file URL Node's own resolver gives, so mailparser, better-sqlite3 and the rest load
 * as they do under tsx. The *-source.ts factories keep their own tests (parse-pool,
 * search-thread, auth-thread, read-path) and `npm start` uses them unchanged.
 */
import { createHash } from 'node:crypto';
import { mkdirSync, renameSync, writeFileSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';
import { build, type Plugin } from 'esbuild';
import type { AuthWorkerFactory } from '../../src/workers/threads/auth-thread-client.js';
import type { ParseWorkerFactory } from '../../src/workers/threads/parse-pool.js';
import type { SearchWorkerFactory } from '../../src/workers/threads/search-writer-thread.js';
import { PARSE_THREAD_LIMITS } from '../../src/workers/threads/thread-limits.js';

const THREADS_DIR = new URL('../../src/workers/threads/', import.meta.url);
const ENTRIES = ['parse-thread', 'search-thread', 'auth-thread'] as const;
type Entry = (typeof ENTRIES)[number];

/** Packages stay outside the bundle, imported by the file URL that Node resolves for them from this repository. */
const packagesByNodeResolution: Plugin = {
  name: 'packages-by-node-resolution',
  setup(builder) {
    builder.onResolve({ filter: /^[^./]/ }, (args) => ({
      path: args.path.startsWith('node:') ? args.path : import.meta.resolve(args.path),
      external: true,
    }));
  },
};

/**
 * Bundles the three thread files and writes each under the temp folder by the hash of its
 * text (written to a temp name and renamed, so test processes running side by side never
 * read a half-written file). Returns each thread's file URL.
 */
const bundle = async (): Promise<Record<Entry, URL>> => {
  const result = await build({
    entryPoints: ENTRIES.map((entry) => new URL(`${entry}.ts`, THREADS_DIR).pathname),
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    write: false,
    outdir: '/',
    outExtension: { '.js': '.mjs' },
    plugins: [packagesByNodeResolution],
    logLevel: 'error',
  });
  const dir = join(tmpdir(), 'agentpost-test-threads');
  mkdirSync(dir, { recursive: true });
  const urls = {} as Record<Entry, URL>;
  for (const entry of ENTRIES) {
    const output = result.outputFiles.find((file) => file.path === `/${entry}.mjs`);
    if (!output) throw new Error(`esbuild wrote no ${entry}.mjs`);
    const hash = createHash('sha256').update(output.contents).digest('hex').slice(0, 16);
    const file = join(dir, `${entry}-${hash}.mjs`);
    if (!existsSync(file)) {
      const temp = `${file}.${process.pid}.tmp`;
      writeFileSync(temp, output.contents);
      renameSync(temp, file);
    }
    urls[entry] = pathToFileURL(file);
  }
  return urls;
};

/** Flags that preload a module (`--import x`, `--import=x`, `--loader`, `--require`, `-r`). */
const PRELOAD = /^(--import|--loader|--experimental-loader|--require|-r)(=|$)/;

/**
 * The process's flags without its preloads. A worker inherits execArgv, and under tap that is
 * tsx plus tap's own mock and processinfo imports, each registering loader hooks (so one more
 * hooks thread per worker): a bundle of plain JavaScript needs none of them, and the threads
 * were never what tap's mocks or coverage look at. Other flags (--expose-gc, ...) are kept.
 */
export const withoutPreloads = (argv: readonly string[]): string[] => {
  const kept: string[] = [];
  for (let i = 0; i < argv.length; i += 1) {
    const flag = argv[i] as string;
    const match = PRELOAD.exec(flag);
    if (!match) kept.push(flag);
    else if (match[2] === '') i += 1; // the value is the next argument
  }
  return kept;
};

/**
 * process.env with NODE_OPTIONS' preloads taken out: a worker reads NODE_OPTIONS from its env,
 * and tap puts its processinfo import there. Measured under tap: 1.4 s of CPU per startApp with
 * it, 0.5 s without.
 */
const envWithoutPreloads = (): NodeJS.ProcessEnv => {
  const env = { ...process.env };
  const options = env.NODE_OPTIONS;
  if (options === undefined) return env;
  const kept = withoutPreloads((options.match(/"[^"]*"|\S+/g) ?? []).map((token) => token.replace(/^"(.*)"$/, '$1')));
  if (kept.length === 0) delete env.NODE_OPTIONS;
  else env.NODE_OPTIONS = kept.map((flag) => JSON.stringify(flag)).join(' ');
  return env;
};

let bundled: Promise<Record<Entry, URL>> | null = null;

export interface BundledThreads {
  parseWorker: ParseWorkerFactory;
  searchWorker: SearchWorkerFactory;
  authWorker: AuthWorkerFactory;
}

/** The factories, once this process's bundle is written (the first call waits for esbuild, about 0.2 s). */
export const bundledThreads = async (): Promise<BundledThreads> => {
  const urls = await (bundled ??= bundle());
  const execArgv = withoutPreloads(process.execArgv);
  return {
    parseWorker: () => new Worker(urls['parse-thread'], { execArgv, env: envWithoutPreloads(), resourceLimits: PARSE_THREAD_LIMITS }),
    searchWorker: (workerData) => new Worker(urls['search-thread'], { execArgv, env: envWithoutPreloads(), workerData }),
    authWorker: (workerData) => new Worker(urls['auth-thread'], { execArgv, env: envWithoutPreloads(), workerData }),
  };
};
