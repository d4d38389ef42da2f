/**
 * Entry of the built JavaScript (scripts/build.mjs bundles it to dist/app/agentpost.js, which
 * bin/agentpost and `npm start` run). The parse, search and authentication workers are built
 * beside it as dist/app/parse-worker.js, search-worker.js and auth-worker.js, so each starts from its file: plain
 * JavaScript, no TypeScript loader in the process or its threads.
 */
import { Worker, type ResourceLimits } from 'node:worker_threads';
import { AUTH_WORKER_LIMITS, PARSE_WORKER_LIMITS } from '../src/workers/worker-limits.js';
import { runAndExit } from './run.js';

/** Resolved against this file's URL once bundled, i.e. dist/app/. */
const builtWorker = (file: string, resourceLimits?: ResourceLimits) => (workerData?: unknown) =>
  new Worker(new URL(file, import.meta.url), { workerData, resourceLimits });

runAndExit({
  parseWorker: builtWorker('./parse-worker.js', PARSE_WORKER_LIMITS),
  searchWorker: builtWorker('./search-worker.js'),
  authWorker: builtWorker('./auth-worker.js', AUTH_WORKER_LIMITS),
});
