/**
 * Starts a parse thread from this source tree (npm start, tests, benches).
 *
 * On Node 20 a worker does not get the main thread's `--import tsx` loader hooks for its
 * entry ("Unknown file extension .ts"), so the thread starts from a short evaluated script
 * that registers tsx itself and then imports parse-thread.ts. Both URLs are resolved here,
 * so the working directory does not matter.
 *
 * Only bin/main.ts, the test helpers and the benches import this file. It must never reach
 * the single executable's bundle: import.meta is empty in CommonJS (scripts/package.mjs
 * makes that a build error) and there is no tsx or .ts file there; bin/sea-entry.ts passes
 * a factory that evaluates the bundled thread from a SEA asset instead.
 */
import { Worker } from 'node:worker_threads';
import type { ParseWorkerFactory } from './parse-pool.js';

const TSX_API = import.meta.resolve('tsx/esm/api');
const THREAD_FILE = new URL('./parse-thread.ts', import.meta.url).href;

const BOOT = `import(${JSON.stringify(TSX_API)})
  .then(({ register }) => { register(); return import(${JSON.stringify(THREAD_FILE)}); })`;

export const sourceParseWorker: ParseWorkerFactory = () => new Worker(BOOT, { eval: true });
