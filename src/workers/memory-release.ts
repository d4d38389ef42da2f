import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';

/**
 * After a burst of work, hand the memory it used back once things are quiet. Measured on
 * bench:ingest: after 20,000 messages the main thread's heap held about 30 MB of garbage
 * and a 32 MB young generation for minutes (V8's memory reducer did not run: node-cron's
 * tick every second keeps the allocation rate from looking idle), and one full GC brought it
 * back to its idle size. So each thread that works in bursts (main, parse, search) calls
 * `touch()` when it does work, and a full GC runs once `quietMs` after the last touch.
 * A touch only stores a number; the check runs on an unref'd timer.
 */
export const releaseWhenQuiet = (quietMs: number, collect = fullGc()): { touch(): void; stop(): void } => {
  let last = 0;
  let pending = false;
  const timer = setInterval(() => {
    if (pending && performance.now() - last >= quietMs) {
      pending = false;
      collect?.();
    }
  }, quietMs);
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
 * This thread's full garbage collection. V8 exposes `gc` only to contexts made after
 * --expose-gc is set, so a fresh context is made to fetch it; null if V8 refuses.
 */
export const fullGc = (): (() => void) | null => {
  const exposed = (globalThis as { gc?: () => void }).gc;
  if (typeof exposed === 'function') return exposed;
  try {
    setFlagsFromString('--expose-gc');
    return runInNewContext('gc') as () => void;
  } catch {
    return null;
  }
};
