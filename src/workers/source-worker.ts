/**
 * Starts a worker thread from a .ts file of this source tree (npm start, tests, benches).
 *
 * On Node 20 a worker does not get the main thread's `--import tsx` loader hooks for its
 * entry ("Unknown file extension .ts"), so the thread starts from a short evaluated script
 * that registers tsx itself and then imports the file. Both URLs are resolved here, so the
 * working directory does not matter.
 *
 * Only the *-source.ts factories import this file. It must never reach the single
 * executable's bundle: import.meta is empty in CommonJS (scripts/package.mjs makes that a
 * build error) and there is no tsx or .ts file there; bin/sea-entry.ts evaluates the bundled
 * threads from SEA assets instead.
 */
import { Worker, type ResourceLimits } from 'node:worker_threads';

const TSX_API = import.meta.resolve('tsx/esm/api');

export const startFromSource = (threadFile: URL, workerData?: unknown, resourceLimits?: ResourceLimits): Worker => {
  const boot = `import(${JSON.stringify(TSX_API)})
  .then(({ register }) => { register(); return import(${JSON.stringify(threadFile.href)}); })`;
  return new Worker(boot, { eval: true, workerData, resourceLimits });
};
