/** Starts a parse worker from this source tree (see source-worker.ts). */
import type { ParseWorkerFactory } from './parse-pool.js';
import { startFromSource } from './source-worker.js';
import { PARSE_WORKER_LIMITS } from './worker-limits.js';

const THREAD_FILE = new URL('./parse-worker.ts', import.meta.url);

export const sourceParseWorker: ParseWorkerFactory = () => startFromSource(THREAD_FILE, undefined, PARSE_WORKER_LIMITS);
