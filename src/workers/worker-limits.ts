import type { ResourceLimits } from 'node:worker_threads';

/**
 * V8 heap limits of the parse and authentication workers. Its young generation otherwise grows to V8's default
 * (semi-spaces of 32 MB on Node 24: up to 96 MB committed under load, and kept for a while
 * after), most of what the thread costs on a small machine. 3 MB means semi-spaces of 1 MB:
 * the objects of one parse die young anyway. The old generation keeps V8's default, so a
 * large message still parses.
 *
 * In the executable, whose --max-semi-space-size=2 caps the main thread's young generation
 * (scripts/package.mjs), that process-wide flag would win over this limit (at 8, it made 16 MB of
 * new space here); bin/sea-entry.ts unsets it once the main heap is configured, before any thread
 * starts, which lowers both the idle and the peak memory (docs/contributing/benchmarks.md).
 * Small young generations in threads that use SQLite once could not be: better-sqlite3 12 aborted
 * the process ("RemoveEnvironmentCleanupHook: Assertion (env) != nullptr") when a GC outside
 * any context finalized a statement, which small young generations made frequent. Statements
 * are kept now, and the executable's addon registers no such hook (scripts/sea-runtime.mjs).
 */
export const PARSE_WORKER_LIMITS: ResourceLimits = { maxYoungGenerationSizeMb: 3 };

/**
 * The authentication worker's: the same small young generation. Its checks of a burst's
 * messages run side by side and each leaves garbage (parsed headers, canonicalized bodies);
 * with V8's default the thread took a large share of the executable's RSS at a burst's peak
 * (docs/contributing/benchmarks.md).
 */
export const AUTH_WORKER_LIMITS: ResourceLimits = { maxYoungGenerationSizeMb: 3 };
