import type { ResourceLimits } from 'node:worker_threads';

/**
 * V8 heap limits of the parse and search threads. A thread's young generation otherwise
 * grows to V8's default (semi-spaces of 16 MB on Node 20, 32 MB on Node 24: up to 96 MB
 * committed per thread under load, and kept for a while after), which is most of what a
 * thread costs on a small machine. 3 MB means semi-spaces of 1 MB: the objects of one parse
 * or one index batch die young anyway, and the scavenges that run more often stay short.
 * The old generation keeps V8's default, so a large message still parses.
 */
export const THREAD_RESOURCE_LIMITS: ResourceLimits = { maxYoungGenerationSizeMb: 3 };
