/** Starts the authentication worker from this source tree (see source-worker.ts). */
import type { AuthWorkerFactory } from './auth-client.js';
import { startFromSource } from './source-worker.js';
import { AUTH_WORKER_LIMITS } from './worker-limits.js';

const THREAD_FILE = new URL('./auth-worker.ts', import.meta.url);

export const sourceAuthWorker: AuthWorkerFactory = (workerData) => startFromSource(THREAD_FILE, workerData, AUTH_WORKER_LIMITS);
