/** Starts the search worker from this source tree (see source-worker.ts). */
import { startFromSource } from './source-worker.js';
import type { SearchWorkerFactory } from './search-writer.js';

const THREAD_FILE = new URL('./search-worker.ts', import.meta.url);

export const sourceSearchWorker: SearchWorkerFactory = (workerData) => startFromSource(THREAD_FILE, workerData);
