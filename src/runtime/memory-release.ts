/**
 * After a burst of work, hand the memory it used back once things are quiet. Each thread that
 * works in bursts (main, parse, search, authentication) calls `touch()` when it does work, and
 * a full GC runs once `quietMs` after the last touch. V8's own memory reducer leaves more
 * resident a minute after a burst than this collection does, even with no timer ticking in the
 * process (docs/contributing/benchmarks.md, "The runtime: memory ..."). A touch only stores a
 * number; one unref'd timer is armed while work is recent, and none on an idle server.
 */
export const releaseWhenQuiet = (quietMs: number, collect?: () => void): { touch(): void; stop(): void } => {
  let last = 0;
  let timer: NodeJS.Timeout | null = null;
  let stopped = false;
  let gc: (() => void) | null | undefined = collect;
  const check = (): void => {
    timer = null;
    const quietFor = performance.now() - last;
    if (quietFor < quietMs) return arm(quietMs - quietFor);
    gc ??= fullGc();
    gc?.();
  };
  const arm = (ms: number): void => {
    if (stopped) return;
    timer = setTimeout(check, Math.max(1, ms));
    timer.unref();
  };
  return {
    touch: () => {
      last = performance.now();
      if (timer === null) arm(quietMs);
    },
    stop: () => {
      stopped = true;
      if (timer !== null) clearTimeout(timer);
      timer = null;
    },
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
 * back to the system; a plain full GC keeps them pooled for reuse: after a burst both shrink
 * the heap alike, but only this one brings the process's RSS down with it
 * (docs/contributing/benchmarks.md). V8 before 12 (Node 20) takes no such option.
 */
const LAST_RESORT: GcOptions = { type: 'major', execution: 'sync', flavor: 'last-resort' };
const handsPagesBack = (): boolean => Number(process.versions.v8.split('.')[0]) >= 12;
