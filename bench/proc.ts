import { readFileSync } from 'node:fs';

/** What /proc says about another process (Linux): CPU time and resident memory. */

const TICKS_PER_SECOND = 100; // getconf CLK_TCK on Linux

/** The fields of a `stat` file of /proc after the command name, which is in parentheses and may hold spaces (field 3, the state, first). */
const statFields = (path: string): string[] => {
  const stat = readFileSync(path, 'utf8');
  return stat.slice(stat.lastIndexOf(')') + 2).split(' ');
};

const ticksToMs = (...ticks: string[]): number => (ticks.reduce((sum, value) => sum + Number(value), 0) * 1000) / TICKS_PER_SECOND;

/** User plus system CPU in ms from a `stat` file of /proc. */
const statCpuMs = (path: string): number => {
  const fields = statFields(path);
  return ticksToMs(fields[11], fields[12]);
};

/** User plus system CPU of the process and all its threads, in ms. */
export const cpuMs = (pid: number): number => statCpuMs(`/proc/${pid}/stat`);

/** User plus system CPU of the process's main thread alone (its thread id is the process id), in ms. */
export const mainThreadCpuMs = (pid: number): number => statCpuMs(`/proc/${pid}/task/${pid}/stat`);

/**
 * cpuMs plus the CPU of the children it has reaped (cutime, cstime): a Postfix or Dovecot
 * master forks workers that end during a burst, and their CPU lives on only there.
 */
export const cpuMsWithReaped = (pid: number): number => {
  const fields = statFields(`/proc/${pid}/stat`);
  return ticksToMs(fields[11], fields[12], fields[13], fields[14]);
};

/** Resident set size now (VmRSS) and its peak so far (VmHWM), in MB. */
export const rssMb = (pid: number): { now: number; peak: number; anonymous: number; file: number } => {
  const status = readFileSync(`/proc/${pid}/status`, 'utf8');
  const kb = (name: string) => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN);
  // File pages (the executable, the database's memory map) are clean: the kernel can drop them at need.
  return { now: kb('VmRSS') / 1024, peak: kb('VmHWM') / 1024, anonymous: kb('RssAnon') / 1024, file: kb('RssFile') / 1024 };
};

/** Samples VmRSS every `everyMs` until stopped; returns the highest sample. */
export const sampleRss = (pid: number, everyMs = 100): { stop(): number; highest(): ReturnType<typeof rssMb> } => {
  let highest = rssMb(pid);
  const timer = setInterval(() => {
    try {
      const now = rssMb(pid);
      if (now.now > highest.now) highest = now;
    } catch {
      // the process is gone; the samples so far stand
    }
  }, everyMs);
  return {
    stop: () => {
      clearInterval(timer);
      return highest.now;
    },
    // The highest sample's split into anonymous and file pages.
    highest: () => highest,
  };
};
