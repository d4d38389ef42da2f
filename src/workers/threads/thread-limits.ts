import type { ResourceLimits } from 'node:worker_threads';

/**
 * V8 heap limits of the parse thread. Its young generation otherwise grows to V8's default
 * (semi-spaces of 32 MB on Node 24: up to 96 MB committed under load, and kept for a while
 * after), most of what the thread costs on a small machine. 3 MB means semi-spaces of 1 MB:
 * the objects of one parse die young anyway. The old generation keeps V8's default, so a
 * large message still parses.
 *
 * Not for threads that use SQLite (the main thread, the search thread): better-sqlite3 12
 * aborts the process ("RemoveEnvironmentCleanupHook: Assertion (env) != nullptr") when a
 * statement is collected by a GC that V8 runs as a task outside any context, and a small
 * young generation makes such GCs frequent; the executable with --max-semi-space-size=1
 * died within seconds of starting.
 */
export const PARSE_THREAD_LIMITS: ResourceLimits = { maxYoungGenerationSizeMb: 3 };
