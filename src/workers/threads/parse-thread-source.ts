/** Starts a parse thread from this source tree (see source-thread.ts). */
import type { ParseWorkerFactory } from './parse-pool.js';
import { startFromSource } from './source-thread.js';
import { PARSE_THREAD_LIMITS } from './thread-limits.js';

const THREAD_FILE = new URL('./parse-thread.ts', import.meta.url);

export const sourceParseWorker: ParseWorkerFactory = () => startFromSource(THREAD_FILE, undefined, PARSE_THREAD_LIMITS);
