import { readFileSync } from 'node:fs';

/** native/heap-trim.c, which the single executable loads from its asset (bin/sea-entry.ts). */
export interface NativeMemoryAddon {
  /** glibc's malloc_trim(0): every arena's free pages back to the system. */
  trim(): boolean;
  /** madvise(MADV_DONTNEED) on a page-aligned range; true when done. */
  dropPages(start: number, length: number): boolean;
}

/** A range of the address space, in bytes. */
export interface Mapping {
  start: number;
  length: number;
}

// A mapping's first line in /proc/<pid>/smaps (proc(5)): range, permissions, offset, device,
// inode, then the path for a file mapping.
const HEADER = /^([0-9a-f]+)-([0-9a-f]+) ([r-][w-][x-][ps]) [0-9a-f]+ \S+ \d+ *(.*)$/;
const ANONYMOUS = /^Anonymous:\s+(\d+) kB$/;

/**
 * The mappings of `file` in /proc/self/smaps whose resident pages can go with nothing lost:
 * private and not writable, so no page of them can become the process's own copy, and with
 * none now (`Anonymous: 0 kB`). A segment the loader relocated before making it read-only
 * (RELRO) holds such copies; dropping those would bring back the file's unrelocated bytes, so
 * any mapping with one stays. What stays in the list is the file's bytes as they are on disk,
 * which the next touch maps again from the page cache.
 */
export const releasableMappings = (smaps: string, file: string): Mapping[] => {
  const found: Mapping[] = [];
  let candidate: Mapping | null = null;
  let anonymous: number | null = null;
  const settle = () => {
    if (candidate && anonymous === 0) found.push(candidate);
    candidate = null;
    anonymous = null;
  };
  for (const line of smaps.split('\n')) {
    const header = HEADER.exec(line);
    if (header) {
      settle();
      const [, from, to, permissions, path] = header;
      if (path === file && permissions[1] === '-' && permissions[3] === 'p') {
        const start = Number.parseInt(from, 16);
        candidate = { start, length: Number.parseInt(to, 16) - start };
      }
      continue;
    }
    const count = ANONYMOUS.exec(line);
    if (count) anonymous = Number(count[1]);
  }
  settle();
  return found;
};

/**
 * Hands back what the C side holds for nothing once a burst of work is over: the C heap's
 * free pages (malloc_trim), and the resident pages of the executable's own read-only mappings
 * (its code, read-only data, and the JS source and code cache that start-up copied into V8's
 * heap). Those are file pages: they stay in the page cache, and what runs next maps its pages
 * back with a minor fault. On the idle executable that is about half its RSS
 * (docs/contributing/benchmarks.md). Off Linux there is no /proc/self/smaps and only the
 * trim runs.
 *
 * The mappings are read from /proc/self/smaps at the first call only: the executable's are
 * made at exec and never change, and one that is not writable cannot gain a private page, so
 * the first verdict holds for the process's life (each later call saves reading the file).
 */
export const nativeMemoryRelease = (addon: NativeMemoryAddon, executable: string = process.execPath): (() => void) => {
  let releasable: Mapping[] | null = null;
  return () => {
    addon.trim();
    releasable ??= executableMappings(executable);
    for (const { start, length } of releasable) addon.dropPages(start, length);
  };
};

const executableMappings = (executable: string): Mapping[] => {
  try {
    return releasableMappings(readFileSync('/proc/self/smaps', 'utf8'), executable);
  } catch {
    return [];
  }
};
