/**
 * How long the event loop of this process (which runs the app under test) was held: the most
 * time the main thread spent on a CPU between two turns of a 10 ms timer, read from
 * /proc/thread-self/schedstat (Linux; nanoseconds on a CPU). Unlike the delay of the timer
 * itself (perf_hooks' monitorEventLoopDelay, also reported), it does not count the time the
 * machine's other work kept this thread waiting for a core: the tests share two cores with
 * other work, where a 5 ms step can be a 60 ms delay. Where /proc has no schedstat, the
 * delay is all there is, and it is used.
 */
import { existsSync, readFileSync } from 'node:fs';
import { monitorEventLoopDelay } from 'node:perf_hooks';

const SCHEDSTAT = '/proc/thread-self/schedstat';
const TICK_MS = 10;

export interface LoopHold {
  /** The longest hold: CPU time between two ticks, or the delay where that cannot be read. */
  holdMs: number;
  /** The longest delay of a timer (wall clock, the scheduler's waits included). */
  delayMs: number;
}

const cpuNanoseconds = (): number => Number(readFileSync(SCHEDSTAT, 'latin1').split(' ')[0]);

/** Measures from now until `stop`. */
export const watchLoopHold = (): { stop(): LoopHold } => {
  const delay = monitorEventLoopDelay({ resolution: 5 });
  delay.enable();
  const onCpu = existsSync(SCHEDSTAT);
  let last = onCpu ? cpuNanoseconds() : 0;
  let longest = 0;
  const timer = setInterval(() => {
    if (!onCpu) return;
    const now = cpuNanoseconds();
    longest = Math.max(longest, now - last);
    last = now;
  }, TICK_MS);
  return {
    stop() {
      clearInterval(timer);
      delay.disable();
      const delayMs = delay.max / 1e6;
      return { holdMs: onCpu ? longest / 1e6 : delayMs, delayMs };
    },
  };
};
