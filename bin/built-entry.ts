/**
 * Entry of the built JavaScript (scripts/build.mjs bundles it to dist/app/agentpost.js, which
 * bin/agentpost and `npm start` run). The parse, search and authentication threads are built
 * beside it as dist/app/parse-thread.js, search-thread.js and auth-thread.js, so each starts from its file: plain
 * JavaScript, no TypeScript loader in the process or its threads.
 */
import { Worker, type ResourceLimits } from 'node:worker_threads';
import { PARSE_THREAD_LIMITS } from '../src/workers/threads/thread-limits.js';
import { runAndExit } from './run.js';

/** Resolved against this file's URL once bundled, i.e. dist/app/. */
const builtThread = (file: string, resourceLimits?: ResourceLimits) => (workerData?: unknown) =>
  new Worker(new URL(file, import.meta.url), { workerData, resourceLimits });

runAndExit({
  parseWorker: builtThread('./parse-thread.js', PARSE_THREAD_LIMITS),
  searchWorker: builtThread('./search-thread.js'),
  authWorker: builtThread('./auth-thread.js'),
});
