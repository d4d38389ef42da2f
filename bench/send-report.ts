import { fmt, percentile } from './lib.js';
import { type ProfileSplit, type Side, STEPS, type Step } from './send-cost.js';
import type { PhaseResult, ServerCpu, Target } from './send-phases.js';

/** What bench:send prints once every phase has run: the rates side by side, then agentpost's CPU by step. */

const TARGET_NAMES: Record<Target, string> = { rest: 'agentpost REST', mcp: 'agentpost MCP', postfix: 'postfix', rest2: 'agentpost REST, 2 processes' };

/** Columns padded to their widest cell; the first `labels` columns left-aligned, the figures right-aligned. */
const table = (rows: string[][], labels = 1): string => {
  const widths = rows[0].map((_, column) => Math.max(...rows.map((row) => row[column].length)));
  return rows.map((row) => row.map((cell, column) => (column < labels ? cell.padEnd(widths[column]) : cell.padStart(widths[column]))).join('  ')).join('\n');
};

const rate = (count: number, seconds: number): string => (count / seconds).toFixed(0);

export const printRates = (results: readonly PhaseResult[]): void => {
  const rows = [['clients', 'target', 'accepted sends/s', 'delivered rcpt/s', 'send p50 ms', 'p99 ms', 'server CPU ms/send', 'bench CPU ms/send']];
  for (const result of results) {
    rows.push([
      String(result.clients),
      TARGET_NAMES[result.target],
      rate(result.sends, result.acceptedSeconds),
      rate(result.recipients, result.deliveredSeconds),
      fmt(percentile(result.latenciesMs, 50)),
      fmt(percentile(result.latenciesMs, 99)),
      fmt(result.server.processMs / result.sends, 3),
      fmt(result.benchMs / result.sends, 3),
    ]);
  }
  console.log(table(rows, 2));
  for (const clients of new Set(results.map((result) => result.clients))) printRatios(results.filter((result) => result.clients === clients));
};

const ratio = (ours: number, theirs: number): string => `${fmt(ours / theirs)}x`;

/** Per client count: agentpost against Postfix (delivered recipients/s, the 2x), MCP against REST (accepted sends/s, within 20%). */
const printRatios = (results: readonly PhaseResult[]): void => {
  const of = (target: Target) => results.find((result) => result.target === target);
  const [rest, mcp, postfix, rest2] = [of('rest'), of('mcp'), of('postfix'), of('rest2')];
  const delivered = (result: PhaseResult) => result.recipients / result.deliveredSeconds;
  const accepted = (result: PhaseResult) => result.sends / result.acceptedSeconds;
  const parts: string[] = [];
  if (rest && postfix) parts.push(`REST / Postfix delivered ${ratio(delivered(rest), delivered(postfix))}`);
  if (mcp && postfix) parts.push(`MCP / Postfix delivered ${ratio(delivered(mcp), delivered(postfix))}`);
  if (mcp && rest) parts.push(`MCP / REST accepted ${ratio(accepted(mcp), accepted(rest))}`);
  if (rest2 && rest) parts.push(`two processes / one, REST accepted ${ratio(accepted(rest2), accepted(rest))}`);
  if (parts.length > 0) console.log(`${results[0].clients} client(s): ${parts.join('; ')}`);
};

const SIDE_HEADINGS: Record<Side, string> = {
  request: 'the request, ms per accepted send',
  delivery: 'the delivery, ms per delivered recipient',
  shared: 'shared, ms per accepted send',
};

/** A step's CPU divided by what its side is counted in. */
const perUnit = (step: Step, ms: number, result: PhaseResult): number => ms / (step.side === 'delivery' ? result.recipients : result.sends);

/** An agentpost phase run both ways: the CPU from the run without the profiler, the shares from the run under it. */
interface Split {
  result: PhaseResult;
  cpu: Required<ServerCpu>;
  profiled: Required<ServerCpu> & { split: ProfileSplit };
}

const splitsOf = (results: readonly PhaseResult[]): Split[] =>
  results.flatMap(({ server, profiled, ...result }) => {
    if (server.mainMs === undefined || profiled?.mainMs === undefined) return [];
    return [{ result: { server, ...result }, cpu: { ...server, mainMs: server.mainMs }, profiled: { ...profiled, mainMs: profiled.mainMs } }];
  });

/** The main thread's CPU of a step: its share of the profile times the main thread's CPU in the run without the profiler. */
const stepMs = (split: Split, step: Step): number => (split.profiled.split.shares.get(step) ?? 0) * split.cpu.mainMs;

const stepRows = (splits: readonly Split[]): string[][] => {
  const rows: string[][] = [];
  for (const side of ['request', 'delivery', 'shared'] as const) {
    const steps = Object.values(STEPS).filter((step) => step.side === side);
    rows.push([SIDE_HEADINGS[side], ...splits.map(() => '')]);
    for (const step of steps) rows.push([`  ${step.name}`, ...splits.map((split) => fmt(perUnit(step, stepMs(split, step), split.result), 3))]);
    const total = (split: Split) => steps.reduce((sum, step) => sum + perUnit(step, stepMs(split, step), split.result), 0);
    rows.push([`  = ${side}`, ...splits.map((split) => fmt(total(split), 3))]);
  }
  return rows;
};

const totalRows = (splits: readonly Split[]): string[][] => {
  const perSendOf = (label: string, ms: (split: Split) => number) => [label, ...splits.map((split) => fmt(ms(split) / split.result.sends, 3))];
  const rows = [
    perSendOf('main thread (/proc), ms per send', (split) => split.cpu.mainMs),
    perSendOf('other threads (/proc), ms per send', (split) => split.cpu.processMs - split.cpu.mainMs),
  ];
  for (const role of new Set(splits.flatMap((split) => split.profiled.split.workers.map((worker) => worker.role)))) {
    const busy = (split: Split) => sum(split.profiled.split.workers.filter((worker) => worker.role === role).map((worker) => worker.busyMs));
    rows.push(perSendOf(`  of which ${role} thread busy (its profile)`, busy));
  }
  rows.push(perSendOf('whole process (/proc), ms per send', (split) => split.cpu.processMs));
  rows.push(['whole process (/proc), ms per recipient', ...splits.map((split) => fmt(split.cpu.processMs / split.result.recipients, 3))]);
  rows.push(perSendOf('under the profiler: whole process, ms per send', (split) => split.profiled.processMs));
  rows.push(['under the profiler: main busy / its CPU', ...splits.map((split) => `${fmt(split.profiled.split.busyMs / split.profiled.mainMs)}x`)]);
  return rows;
};

const sum = (values: number[]): number => values.reduce((total, value) => total + value, 0);

/**
 * agentpost's server CPU by step, one column per phase: the main thread's CPU from /proc in the
 * run without the profiler, divided by the shares of the profiled run's main-thread samples;
 * then /proc's totals.
 */
export const printCpuSplit = (results: readonly PhaseResult[]): void => {
  const splits = splitsOf(results);
  if (splits.length === 0) return;
  const heading = ['agentpost server CPU', ...splits.map((split) => `${split.result.target.toUpperCase()} ${split.result.clients}`)];
  console.log(table([heading, ...stepRows(splits), ...totalRows(splits)]));
};

/** The main thread's busiest functions per phase (self time), in ms per send as the steps are. */
export const printTop = (results: readonly PhaseResult[]): void => {
  for (const split of splitsOf(results)) {
    if (split.profiled.split.top.length === 0) continue;
    console.log(`\n${TARGET_NAMES[split.result.target]}, ${split.result.clients} client(s): the main thread's busiest functions, ms per send`);
    for (const { frame, share } of split.profiled.split.top) console.log(`${fmt((share * split.cpu.mainMs) / split.result.sends, 3).padStart(8)}  ${frame}`);
  }
};
