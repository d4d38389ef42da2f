import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * V8 CPU profiles as `node --cpu-prof` writes them (one file per thread), read back to say
 * where a thread's time went during a stretch of a benchmark. A sample's stack is what ran
 * at that instant; its weight is the time until the next sample. The profiler samples by
 * wall clock, so a thread that waits for a core (two cores shared with the bench) still
 * collects samples: shares of a profile are sound, its absolute times are not CPU time.
 */

interface CallFrame {
  functionName: string;
  url: string;
}

interface ProfileNode {
  id: number;
  callFrame: CallFrame;
  children?: number[];
}

/** The .cpuprofile format (Chrome DevTools protocol, Profiler.Profile); times in µs. */
interface RawProfile {
  nodes: ProfileNode[];
  startTime: number;
  endTime: number;
  samples: number[];
  timeDeltas: number[];
}

/** One frame of a stack, its source named as a reader of this tree would name it. */
export interface Frame {
  /** `src/store/db.ts`, `node_modules/koa/lib/application.js`, `node:net`, or '' for V8's own entries and native code. */
  file: string;
  functionName: string;
}

/** A thread's profile: `threadId` 0 is the main thread. */
export interface ThreadProfile {
  threadId: number;
  /** Every sample as [time in µs on the system's monotonic clock, weight in µs, stack from leaf to root]. */
  samples: { at: number; weight: number; stack: readonly Frame[] }[];
}

/** Where a frame's code lives, relative to the working directory the server ran in. */
const fileOf = (url: string, cwd: string): string => (url.startsWith('file://') ? relative(cwd, fileURLToPath(url)) : url);

/**
 * V8 takes its profile times from the same monotonic clock as `process.hrtime` (CLOCK_MONOTONIC
 * on Linux), so a window measured in the bench process selects the server's samples.
 */
const parseProfile = (raw: RawProfile, threadId: number, cwd: string): ThreadProfile => {
  const byId = new Map(raw.nodes.map((node) => [node.id, node]));
  const parentOf = new Map<number, number>();
  for (const node of raw.nodes) for (const child of node.children ?? []) parentOf.set(child, node.id);
  // Stacks are shared by every sample of the same node: built once per node.
  const stacks = new Map<number, Frame[]>();
  const stackOf = (id: number): Frame[] => {
    const known = stacks.get(id);
    if (known) return known;
    const node = byId.get(id) as ProfileNode;
    const parent = parentOf.get(id);
    const stack = [{ file: fileOf(node.callFrame.url, cwd), functionName: node.callFrame.functionName }, ...(parent === undefined ? [] : stackOf(parent))];
    stacks.set(id, stack);
    return stack;
  };
  const times: number[] = [];
  let at = raw.startTime;
  for (const delta of raw.timeDeltas) times.push((at += delta));
  return {
    threadId,
    samples: raw.samples.map((id, index) => ({
      at: times[index],
      weight: (index + 1 < times.length ? times[index + 1] : raw.endTime) - times[index],
      stack: stackOf(id),
    })),
  };
};

/** Every profile in `dir` written by process `pid`, main thread first (CPU.<date>.<time>.<pid>.<thread>.<seq>.cpuprofile). */
export const readProfiles = (dir: string, pid: number, cwd: string): ThreadProfile[] =>
  readdirSync(dir)
    .map((name) => /^CPU\.\d+\.\d+\.(\d+)\.(\d+)\.\d+\.cpuprofile$/.exec(name))
    .filter((match): match is RegExpExecArray => match !== null && Number(match[1]) === pid)
    .map((match) => parseProfile(JSON.parse(readFileSync(join(dir, match[0]), 'utf8')) as RawProfile, Number(match[2]), cwd))
    .sort((a, b) => a.threadId - b.threadId);

/** V8's names for samples that ran no JavaScript. */
export const IDLE = '(idle)';
export const GARBAGE_COLLECTOR = '(garbage collector)';
export const PROGRAM = '(program)';

/** A stretch of time on the monotonic clock, in µs. */
export interface Window {
  from: number;
  to: number;
}

/** Microseconds per category of the samples taken within `window`. */
export const timeByCategory = <C>(profile: ThreadProfile, window: Window, categoryOf: (stack: readonly Frame[]) => C): Map<C, number> => {
  const totals = new Map<C, number>();
  // One verdict per distinct stack: the same node's samples share their stack array.
  const verdicts = new Map<readonly Frame[], C>();
  for (const { at, weight, stack } of profile.samples) {
    if (at < window.from || at > window.to) continue;
    let category = verdicts.get(stack);
    if (category === undefined) verdicts.set(stack, (category = categoryOf(stack)));
    totals.set(category, (totals.get(category) ?? 0) + weight);
  }
  return totals;
};

const nameOf = (frame: Frame): string => `${frame.functionName || '(anonymous)'} ${frame.file}`.trim();

/**
 * The functions that ran most themselves (leaf frames) within `window`, not counting idle, each
 * with the innermost frame of this tree's own code that called it (a native SQLite step or a
 * socket write says little alone): for finding what to speed up.
 */
export const topSelfTime = (profile: ThreadProfile, window: Window, count: number): { frame: string; us: number }[] => {
  const self = new Map<string, number>();
  for (const { at, weight, stack } of profile.samples) {
    if (at < window.from || at > window.to || stack[0].functionName === IDLE) continue;
    const caller = stack.find((frame) => frame.file.startsWith('src/'));
    const leaf = caller && caller !== stack[0] ? `${nameOf(stack[0])} < ${nameOf(caller)}` : nameOf(stack[0]);
    self.set(leaf, (self.get(leaf) ?? 0) + weight);
  }
  return [...self]
    .sort((a, b) => b[1] - a[1])
    .slice(0, count)
    .map(([frame, us]) => ({ frame, us }));
};
