import { readFileSync } from 'node:fs';

export interface Rss {
  /** Resident set now, MB. */
  rssMb: number;
  /** Peak resident set since the process started (VmHWM), MB. */
  peakMb: number;
}

/** Linux /proc/<pid>/status; null elsewhere or once the process is gone. */
export const rssOf = (pid: number): Rss | null => {
  try {
    const status = readFileSync(`/proc/${pid}/status`, 'utf8');
    const kb = (name: string) => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN);
    return { rssMb: Math.round(kb('VmRSS') / 1024), peakMb: Math.round(kb('VmHWM') / 1024) };
  } catch {
    return null;
  }
};
