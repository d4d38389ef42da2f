/**
 * The app's worker threads (parse, search, authentication) for startApp: the same thread
 * files as src/workers/*-source.ts start, bundled by esbuild (as scripts/package.mjs
 * bundles them for the executable) once per state of the source (see bundleKey), and started
 * as plain JavaScript.
 *
 * Why: a thread started from source registers tsx itself (source-worker.ts), and on Node 20
 * `register()` starts a loader-hooks thread that loads tsx and esbuild again: about 0.45 s of
 * CPU per thread before the thread's own code runs, and startApp starts two (parse, search);
 * a worker also inherits tap's preloads (see withoutPreloads).
 * The bundle holds only this repository's code; every package is imported from node_modules
 * by the file URL Node's own resolver gives, so mailparser, better-sqlite3 and the rest load
 * as they do under tsx. The *-source.ts factories keep their own tests (parse-pool,
 * search-thread, auth-thread, read-path) and `npm start` uses them unchanged.
 */
import { createHash } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';
import type { Plugin } from 'esbuild';
import { cachedDir, pruneUnused } from '../../scripts/cached-dir.mjs';
import type { AuthWorkerFactory } from '../../src/workers/auth-client.js';
import type { ParseWorkerFactory } from '../../src/workers/parse-pool.js';
import type { SearchWorkerFactory } from '../../src/workers/search-writer.js';
import { AUTH_WORKER_LIMITS, PARSE_WORKER_LIMITS } from '../../src/workers/worker-limits.js';

const THREADS_DIR = new URL('../../src/workers/', import.meta.url);
const ENTRIES = ['parse-worker', 'search-worker', 'auth-worker'] as const;
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

const ROOT = new URL('../../', import.meta.url);
const CACHE = join(tmpdir(), 'agentpost-test-threads');

const filesUnder = (dir: string): string[] =>
  readdirSync(dir, { withFileTypes: true }).flatMap((item) => {
    const path = join(dir, item.name);
    return item.isDirectory() ? filesUnder(path) : [path];
  });

/**
 * What decides the bundles: every file under src/ (the threads import only from there and
 * from packages), tsconfig.json, the installed packages (package-lock.json), esbuild's
 * version and this file (the build's options). Hashing them takes some 20 ms; esbuild, once
 * loaded and run, some 0.3 s of CPU, which each test process would pay.
 */
const bundleKey = (): string => {
  const hash = createHash('sha256');
  const root = fileURLToPath(ROOT);
  const files = [...filesUnder(join(root, 'src')).sort(), join(root, 'tsconfig.json'), join(root, 'package-lock.json'), fileURLToPath(import.meta.url)];
  for (const file of files) {
    const text = readFileSync(file);
    hash.update(`${relative(root, file)}\0${text.length}\0`);
    hash.update(text);
  }
  hash.update(readFileSync(new URL(import.meta.resolve('esbuild/package.json'))));
  return hash.digest('hex').slice(0, 16);
};

/** A day: far longer than a run of the suite, whose every test process marks the folder it uses. */
const UNUSED_MS = 24 * 60 * 60 * 1000;

/**
 * The three thread files bundled, from the cache when this key's bundles are there; else
 * bundled now (cachedDir: into a folder of this process's own, renamed into place, so test
 * processes running side by side never read a half-written one). Each edit of src/ makes a
 * new folder (about 60 KB): those no test process used for a day go then. Returns each
 * thread's file URL.
 */
const bundle = async (): Promise<Record<Entry, URL>> => {
  const dir = join(CACHE, bundleKey());
  await cachedDir(dir, async (making) => {
    pruneUnused(CACHE, UNUSED_MS, dir);
    const { build } = await import('esbuild');
    await build({
      entryPoints: ENTRIES.map((entry) => fileURLToPath(new URL(`${entry}.ts`, THREADS_DIR))),
      bundle: true,
      platform: 'node',
      format: 'esm',
      target: 'node20',
      outdir: making,
      outExtension: { '.js': '.mjs' },
      plugins: [packagesByNodeResolution],
      logLevel: 'error',
    });
  });
  return Object.fromEntries(ENTRIES.map((entry) => [entry, pathToFileURL(join(dir, `${entry}.mjs`))])) as Record<Entry, URL>;
};

/** Flags that preload a module (`--import x`, `--import=x`, `--loader`, `--require`, `-r`). */
const PRELOAD = /^(--import|--loader|--experimental-loader|--require|-r)(=|$)/;

/**
 * The process's flags without its preloads. A worker inherits execArgv, and under tap that is
 * tap's own mock and processinfo imports (and tsx, when tap runs the sources), each registering
 * loader hooks (so one more hooks thread per worker): a bundle of plain JavaScript needs none of them, and the threads
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

/** The factories, once the bundles are there (when the source changed, the first call waits for esbuild, about 0.3 s). */
export const bundledWorkers = async (): Promise<BundledThreads> => {
  const urls = await (bundled ??= bundle());
  // Without tap's --enable-source-maps too: the bundles carry no map, and the packages' maps
  // (read and parsed as each module loads) cost some 65 ms of a parse worker's start. The
  // executable's threads run without it as well (scripts/package.mjs EXEC_ARGV).
  const execArgv = withoutPreloads(process.execArgv).filter((flag) => flag !== '--enable-source-maps');
  return {
    parseWorker: () => new Worker(urls['parse-worker'], { execArgv, env: envWithoutPreloads(), resourceLimits: PARSE_WORKER_LIMITS }),
    searchWorker: (workerData) => new Worker(urls['search-worker'], { execArgv, env: envWithoutPreloads(), workerData }),
    authWorker: (workerData) => new Worker(urls['auth-worker'], { execArgv, env: envWithoutPreloads(), workerData, resourceLimits: AUTH_WORKER_LIMITS }),
  };
};

/** A real thread that loads, says it is ready, and ends its process at its first request: a worker that dies mid-work. */
export const dyingWorker = (): Worker =>
  new Worker(
    `const { parentPort } = require('node:worker_threads');
   parentPort.postMessage({ type: 'ready' });
   parentPort.once('message', () => process.exit(7));`,
    { eval: true },
  );
