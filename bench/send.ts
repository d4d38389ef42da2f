// npm run bench:send: sends through agentpost's REST send and its MCP `send_email`, relaying
// every remote recipient to a loopback SMTP sink (relay mode), and the same messages through a
// private Postfix relaying to the same sink, at 1, 16 and 64 concurrent clients. Prints accepted
// sends/s, delivered recipients/s, the latency of one send, and agentpost's server CPU per
// accepted send and per delivered recipient by step (its profile, bench/send-cost.ts).
// Everything shares this machine (2 cores), so the figures include that contention: compare
// agentpost with its peer from the same run. docs/contributing/benchmarks.md, "Benchmark: sending".
import { loadavg } from 'node:os';
import { argValue, hasFlag, stringArgs } from './lib.js';
import { postfixInstalled, postfixVersion } from './postfix.js';
import { startRelaySink } from './relay-sink.js';
import { agentpostPhase, type PhaseOptions, type PhaseResult, postfixPhase, type Target, twoProcessPhase } from './send-phases.js';
import { printCpuSplit, printRates, printTop } from './send-report.js';

/** A comma-separated flag (`--clients 1,16`), or its default. */
const listArg = (name: string, fallback: string): string[] => (stringArgs(name).at(-1) ?? fallback).split(',').filter(Boolean);

const clientCounts = listArg('clients', '1,16,64').map(Number);
if (clientCounts.some((clients) => !Number.isInteger(clients) || clients <= 0)) throw new Error('--clients takes positive whole numbers, as in 1,16,64');
const targets = listArg('only', 'rest,mcp,postfix,rest2') as Target[];
if (targets.some((target) => !['rest', 'mcp', 'postfix', 'rest2'].includes(target))) throw new Error('--only takes rest, mcp, postfix and rest2');

const sink = await startRelaySink();
const options: PhaseOptions = {
  sends: argValue('sends', 2000),
  warmup: argValue('warmup', 200),
  recipientsPerSend: argValue('recipients', 2),
  sink,
  profileDir: stringArgs('profile-dir').at(-1),
  top: hasFlag('top') ? argValue('top', 20) : 0,
};

/** Each agentpost phase runs again under --cpu-prof for its CPU split: the profiler costs CPU of its own, so the rates come from the run without it. */
const profile = !hasFlag('no-profile');
const withPostfix = targets.includes('postfix') && postfixInstalled();
const load = (): string =>
  loadavg()
    .map((value) => value.toFixed(2))
    .join(' ');
console.log(
  `bench:send: ${options.sends} sends x ${options.recipientsPerSend} remote recipients per phase (after ${options.warmup} untimed), ` +
    `clients ${clientCounts.join(', ')}, relayed to a loopback sink; ${profile ? 'each agentpost phase again under --cpu-prof for the split' : 'no profiles'}; load average ${load()}`,
);
if (targets.includes('postfix') && !withPostfix) console.log('postfix: not installed (or not root), no comparison (apt-get install postfix to compare)');
else if (withPostfix) console.log(`postfix ${postfixVersion()}`);

const progress = (result: PhaseResult, note = ''): void =>
  console.log(
    `  ${result.target} ${result.clients}${note}: ${(result.sends / result.acceptedSeconds).toFixed(0)} sends/s accepted, ` +
      `${(result.recipients / result.deliveredSeconds).toFixed(0)} recipients/s delivered (load average ${load()})`,
  );

/** An agentpost phase, and the same again under the profiler for its split. */
const agentpostPhases = async (target: 'rest' | 'mcp' | 'rest2', clients: number): Promise<PhaseResult> => {
  if (target === 'rest2') {
    const twoProcesses = await twoProcessPhase(clients, options);
    progress(twoProcesses);
    return twoProcesses;
  }
  const plain = await agentpostPhase(target, clients, options, false);
  progress(plain);
  if (!profile) return plain;
  const profiled = await agentpostPhase(target, clients, options, true);
  progress(profiled, ' under --cpu-prof');
  return { ...plain, profiled: profiled.profiled };
};

const results: PhaseResult[] = [];
try {
  for (const clients of clientCounts) {
    for (const target of targets) {
      if (target !== 'postfix') results.push(await agentpostPhases(target, clients));
      else if (withPostfix) {
        results.push(await postfixPhase(clients, options));
        progress(results[results.length - 1]);
      }
    }
  }
} finally {
  await sink.close();
}
console.log();
printRates(results);
console.log();
printCpuSplit(results);
printTop(results);
