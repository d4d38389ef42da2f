/**
 * After a burst of work, hand the memory it used back once things are quiet. Measured on
 * bench:ingest: after 20,000 messages the main thread's heap held about 30 MB of garbage
 * and a 32 MB young generation for minutes (V8's memory reducer did not run: node-cron's
 * tick every second keeps the allocation rate from looking idle), and one full GC brought it
 * back to its idle size. So each thread that works in bursts (main, parse, search) calls
 * `touch()` when it does work, and a full GC runs once `quietMs` after the last touch.
 * A touch only stores a number; the check runs on an unref'd timer.
 */
export const releaseWhenQuiet = (quietMs: number, collect?: () => void): { touch(): void; stop(): void } => {
  let last = 0;
  let pending = false;
  let gc: (() => void) | null | undefined = collect;
  // Checked four times per quiet period, so the collection comes between 1 and 1.25 quiet
  // periods after the last touch, not up to two (startup's garbage stayed 20 s).
  const timer = setInterval(
    () => {
      if (pending && performance.now() - last >= quietMs) {
        pending = false;
        gc ??= fullGc();
        gc?.();
      }
    },
    Math.max(1, quietMs / 4),
  );
  timer.unref();
  return {
    touch: () => {
      last = performance.now();
      pending = true;
    },
    stop: () => clearInterval(timer),
  };
};

/**
 * This thread's full garbage collection: V8's `gc`, there when the process runs with
 * --expose-gc (the single executable does: scripts/package.mjs), else null and nothing is
 * collected. It must be the thread's own `gc`: one fetched from a new vm context runs the
 * collection in that context, where Node 24's ObjectWrap finds no environment when it
 * finalizes a better-sqlite3 statement, and the process aborts.
 */
export const fullGc = (): (() => void) | null => {
  const exposed = (globalThis as { gc?: (options?: GcOptions) => void }).gc;
  if (typeof exposed !== 'function') return null;
  return handsPagesBack() ? () => exposed(LAST_RESORT) : () => exposed();
};

interface GcOptions {
  type: 'major';
  execution: 'sync';
  flavor: 'last-resort';
}

/**
 * V8's last-resort collection (what a low-memory notification runs) also hands the freed pages
 * back to the system; a plain full GC keeps them pooled for reuse. Measured in the executable
 * (Node 24) after a 20,000-message ingest: the main heap went from 192 to 61 MB either way, but
 * only this way did the process's RSS follow. V8 before 12 (Node 20) takes no such option.
 */
const LAST_RESORT: GcOptions = { type: 'major', execution: 'sync', flavor: 'last-resort' };
const handsPagesBack = (): boolean => Number(process.versions.v8.split('.')[0]) >= 12;
