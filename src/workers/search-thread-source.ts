/**
 * Starts the search thread from this source tree (npm start, tests, benches), the way
 * parse-thread-source.ts starts the parse thread: an evaluated script registers tsx in the
 * thread, then imports search-thread.ts. Never part of the single executable's bundle.
 */
import { Worker } from 'node:worker_threads';
import type { SearchWorkerFactory } from './search-writer-thread.js';

const TSX_API = import.meta.resolve('tsx/esm/api');
const THREAD_FILE = new URL('./search-thread.ts', import.meta.url).href;

const BOOT = `import(${JSON.stringify(TSX_API)})
  .then(({ register }) => { register(); return import(${JSON.stringify(THREAD_FILE)}); })`;

export const sourceSearchWorker: SearchWorkerFactory = (workerData) => new Worker(BOOT, { eval: true, workerData });
