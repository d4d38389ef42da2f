import { performance } from 'node:perf_hooks';

/**
 * Long work over many items (an IMAP FETCH or SEARCH of a large folder) in steps that each
 * hold the event loop for about `targetMs`, with a turn of the loop between them, so REST,
 * SMTP and other sessions wait at most one step. Steps are sized by time, not by count: the
 * same items cost several times more in a process that has just started (code not yet
 * optimized, pages not yet mapped) than later.
 */
export interface PaceOptions {
  /** The first step's size, before any pace is known. */
  first: number;
  min: number;
  /** The most items a step takes, whatever the pace (it bounds what a step holds in memory). */
  max: number;
  targetMs: number;
  /** A monotonic clock in ms; tests pass their own. */
  now?: () => number;
}

/**
 * What IMAP's FETCH, STORE and SEARCH take: steps of about 8 ms, at most 500 messages (with raw
 * bytes of up to 64 KB each, src/services/imap/mail.ts, a FETCH step holds at most 32 MB). At
 * least 100: on a loaded machine a step's wall time counts waiting for a CPU too, and smaller
 * steps would then spend more on their own overhead (a query and a turn each) than they save.
 */
export const MESSAGE_STEPS: PaceOptions = { first: 100, min: 100, max: 500, targetMs: 8 };

/** Calls `step` on consecutive slices of `items` until all are done or it returns false. */
export const pacedSteps = async <T>(
  items: readonly T[],
  options: PaceOptions,
  step: (slice: T[]) => Promise<boolean | undefined> | boolean | undefined,
): Promise<void> => {
  const now = options.now ?? (() => performance.now());
  let size = options.first;
  for (let start = 0; start < items.length; ) {
    if (start > 0) await new Promise<void>((resolve) => setImmediate(resolve));
    const began = now();
    const slice = items.slice(start, start + size);
    start += slice.length;
    if ((await step(slice)) === false) return;
    size = nextSize(size, now() - began, options);
  }
};

/** The next step's size, scaled so it takes about `targetMs` if this one's pace holds. */
const nextSize = (size: number, elapsedMs: number, options: PaceOptions): number =>
  Math.max(options.min, Math.min(options.max, Math.round((size * options.targetMs) / Math.max(elapsedMs, 0.1))));
