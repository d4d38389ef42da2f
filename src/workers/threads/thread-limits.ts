import type { ResourceLimits } from 'node:worker_threads';

/**
 * V8 heap limits of the parse thread. Its young generation otherwise grows to V8's default
 * (semi-spaces of 32 MB on Node 24: up to 96 MB committed under load, and kept for a while
 * after), most of what the thread costs on a small machine. 3 MB means semi-spaces of 1 MB:
 * the objects of one parse die young anyway. The old generation keeps V8's default, so a
 * large message still parses.
 *
 * In the executable, whose --max-semi-space-size caps the main thread's young generation
 * (scripts/package.mjs), that process-wide flag wins over this limit: 8 MB semi-spaces. Threads that use SQLite once could not be: better-sqlite3 12 aborted
 * the process ("RemoveEnvironmentCleanupHook: Assertion (env) != nullptr") when a GC outside
 * any context finalized a statement, which small young generations made frequent. Statements
 * are kept now, and the executable's addon registers no such hook (scripts/sea-runtime.mjs).
 */
export const PARSE_THREAD_LIMITS: ResourceLimits = { maxYoungGenerationSizeMb: 3 };
