/** Starts the authentication thread from this source tree (see source-thread.ts). */
import type { AuthWorkerFactory } from './auth-thread-client.js';
import { startFromSource } from './source-thread.js';
import { AUTH_THREAD_LIMITS } from './thread-limits.js';

const THREAD_FILE = new URL('./auth-thread.ts', import.meta.url);

export const sourceAuthWorker: AuthWorkerFactory = (workerData) => startFromSource(THREAD_FILE, workerData, AUTH_THREAD_LIMITS);
