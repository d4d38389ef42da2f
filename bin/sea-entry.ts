/**
 * Entry of the single executable that `npm run package` builds (scripts/package.mjs).
 *
 * Inside the executable, better-sqlite3's native addon travels as a SEA asset. Node can
 * only load an addon from a file (dlopen), so the asset is written to a private temp
 * directory, loaded with process.dlopen, and removed again at once; its exports reach
 * better-sqlite3 as the `nativeBinding` option (runCli -> openCore -> Store.open).
 * @node-rs/argon2's addon (owner passwords) travels and loads the same way; its exports are
 * the package's own `hash` and `verify`, passed as the `argon2` option. So does
 * native/heap-trim.c's (malloc_trim, and dropping file pages), passed as `releaseNativeMemory`.
 * Outside a SEA (e.g. `node --import tsx bin/sea-entry.ts`) it runs like bin/main.ts and
 * better-sqlite3 finds its addon in node_modules as usual.
 *
 * The inbound-parse worker (src/workers/parse-worker.ts) and the search-index worker
 * (src/workers/search-worker.ts) travel as two more assets, each bundled to CommonJS: there
 * is no file to start a Worker from, so their source is evaluated. The search worker opens
 * SQLite too; it gets the addon's file name and loads it by that name, which finds the
 * library the process already has mapped (gone from disk or not), so both threads share one
 * SQLite and its file locks. Outside a SEA no factory is passed: mail is parsed and indexed
 * on the main thread (bin/main.ts is the entry that runs threads from source).
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { getAsset, isSea } from 'node:sea';
import { setFlagsFromString } from 'node:v8';
import { Worker, type ResourceLimits } from 'node:worker_threads';
import { nativeMemoryRelease, type NativeMemoryAddon } from '../src/runtime/native-memory.js';
import { AUTH_WORKER_LIMITS, PARSE_WORKER_LIMITS } from '../src/workers/worker-limits.js';
import type { Argon2Binding } from '../src/core/passwords.js';
import { runAndExit } from './run.js';

/** The asset keys; scripts/package.mjs stores the addon and the parse worker under the same names. */
const ADDON_ASSET = 'better_sqlite3.node';
const ARGON2_ASSET = 'argon2.node';
const HEAP_TRIM_ASSET = 'heap_trim.node';
const PARSE_WORKER_ASSET = 'parse-worker.js';
const SEARCH_WORKER_ASSET = 'search-worker.js';
const AUTH_WORKER_ASSET = 'auth-worker.js';

const loadAddonFromAsset = (asset: string): { exports: object; file: string } => {
  const dir = mkdtempSync(join(tmpdir(), 'agentpost-'));
  const file = join(dir, asset);
  try {
    writeFileSync(file, new Uint8Array(getAsset(asset)), { mode: 0o700 });
    const addon = { exports: {} };
    process.dlopen(addon, file);
    return { exports: addon.exports, file };
  } finally {
    // The loaded library stays mapped after its file is gone (POSIX), so nothing is left behind.
    try {
      rmSync(dir, { recursive: true, force: true });
    } catch {
      // A platform that keeps loaded files locked: the OS temp cleaner removes the directory later.
    }
  }
};

/**
 * Read from the asset each time a thread starts (or is replaced), not once up front: the
 * thread gets its own copy of the source, so one kept here would only hold megabytes of the
 * main heap for nothing (the authentication worker's, when that thread is off, for good).
 */
const workerFromAsset = (asset: string, resourceLimits?: ResourceLimits) => (workerData?: unknown) =>
  new Worker(getAsset(asset, 'utf8'), { eval: true, workerData, resourceLimits });

const addon = isSea() ? loadAddonFromAsset(ADDON_ASSET) : undefined;
const argon2 = isSea() ? (loadAddonFromAsset(ARGON2_ASSET).exports as Argon2Binding) : undefined;
// native/heap-trim.c: the C heap's free pages and the executable's own file pages go back once quiet.
const nativeMemory = isSea() ? (loadAddonFromAsset(HEAP_TRIM_ASSET).exports as NativeMemoryAddon) : undefined;
// The executable's --max-semi-space-size=2 (scripts/package.mjs) is for the main thread,
// whose heap is configured by now; V8 lets the flag win over a worker's resourceLimits, so
// unset it before any thread starts and each keeps its own (worker-limits.ts).
if (isSea()) setFlagsFromString('--max-semi-space-size=0');
const threads = isSea()
  ? {
      parseWorker: workerFromAsset(PARSE_WORKER_ASSET, PARSE_WORKER_LIMITS),
      searchWorker: workerFromAsset(SEARCH_WORKER_ASSET),
      authWorker: workerFromAsset(AUTH_WORKER_ASSET, AUTH_WORKER_LIMITS),
      nativeBindingFile: addon?.file,
    }
  : {};

runAndExit({ nativeBinding: addon?.exports, argon2, releaseNativeMemory: nativeMemory && nativeMemoryRelease(nativeMemory), ...threads });
