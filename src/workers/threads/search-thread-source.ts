/** Starts the search thread from this source tree (see source-thread.ts). */
import { startFromSource } from './source-thread.js';
import type { SearchWorkerFactory } from './search-writer-thread.js';

const THREAD_FILE = new URL('./search-thread.ts', import.meta.url);

export const sourceSearchWorker: SearchWorkerFactory = (workerData) => startFromSource(THREAD_FILE, workerData);
