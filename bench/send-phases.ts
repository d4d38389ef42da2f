import { execFileSync } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { BACKFILL_DELAY_MS } from '../src/runtime/queues/bodies.js';
import { INDEX_DELAY_MS } from '../src/runtime/queues/search-index.js';
import { readProfiles, type Window } from './cpu-profile.js';
import { startAgentpost, startAgentpostBeside } from './ingest-targets.js';
import { tempDir } from './lib.js';
import { startPostfix } from './postfix.js';
import { cpuMs, mainThreadCpuMs } from './proc.js';
import type { RelaySink } from './relay-sink.js';
import { type ProfileSplit, splitProfile } from './send-cost.js';
import { type MessageShape, mcpSender, restSender, runLoad, type Sender, smtpSender } from './send-clients.js';

/**
 * One phase of bench:send: a fresh server (agentpost or a private Postfix), a warm-up that is
 * delivered before the clock starts, then the measured sends and their delivery to the sink.
 */

/** `rest2`: REST through two processes on one data folder. */
export type Target = 'rest' | 'mcp' | 'postfix' | 'rest2';

export interface PhaseOptions extends MessageShape {
  sends: number;
  /** Sends before the clock starts (JIT, lazily loaded modules, pooled connections), delivered first. */
  warmup: number;
  sink: RelaySink;
  /** Keep each profiled phase's profiles under this folder (for DevTools); a temp folder otherwise. */
  profileDir?: string;
  /** How many of the main thread's busiest functions to list per profiled phase (0: none). */
  top: number;
}

/** The server's CPU from /proc over the measured stretch, ms. */
export interface ServerCpu {
  /**
   * agentpost: the main thread, worker threads, V8's helper threads (GC), libuv's pool (fsync),
   * and the profiler when there is one. Postfix: its master and every process it started.
   */
  processMs: number;
  /** agentpost's main thread. */
  mainMs?: number;
}

/** How a phase reads the CPU of the server it loads, so far, ms. */
interface CpuReader {
  processMs(): number;
  mainMs?(): number;
}

const readCpu = (reader: CpuReader): ServerCpu => ({ processMs: reader.processMs(), mainMs: reader.mainMs?.() });

export interface PhaseResult {
  target: Target;
  clients: number;
  sends: number;
  recipients: number;
  acceptedSeconds: number;
  deliveredSeconds: number;
  latenciesMs: number[];
  /** CPU of the bench process (clients and sink) during the phase, ms. */
  benchMs: number;
  server: ServerCpu;
  /** agentpost run under `--cpu-prof`: its CPU (the profiler's included) and what the profile says. */
  profiled?: ServerCpu & { split: ProfileSplit };
}

/** The system's monotonic clock in µs: the clock of V8's profile timestamps. */
const monotonicUs = (): number => Number(process.hrtime.bigint() / 1000n);

/**
 * A send's work goes on after the sink has its recipients: the outcomes are committed, and the
 * Sent copies get their bodies and index entries from queues that wait for more work first.
 * The stretch measured ends once the main thread has used no CPU for longer than those waits.
 */
const QUIET_MS = Math.max(BACKFILL_DELAY_MS, INDEX_DELAY_MS) + 500;

/** Until the server (agentpost's main thread) has been quiet for QUIET_MS, at most 15 s: a server never quiet is measured as it is. */
const quiet = async (reader: CpuReader): Promise<void> => {
  const read = () => reader.mainMs?.() ?? reader.processMs();
  const started = performance.now();
  let last = read();
  let lastChange = performance.now();
  while (performance.now() - lastChange < QUIET_MS && performance.now() - started < 15_000) {
    await new Promise((resolve) => setTimeout(resolve, 100));
    const now = read();
    if (now !== last) [last, lastChange] = [now, performance.now()];
  }
};

interface Measured {
  acceptedSeconds: number;
  deliveredSeconds: number;
  latenciesMs: number[];
  benchMs: number;
  window: Window;
  server: ServerCpu;
}

/** Warm-up, then the measured sends; the server's CPU from the first measured send until it is quiet after the last delivery. */
const measure = async (sender: Sender, clients: number, options: PhaseOptions, reader: CpuReader): Promise<Measured> => {
  await runLoad(sender, 0, options.warmup, clients);
  await options.sink.waitFor(options.warmup * options.recipientsPerSend);
  await quiet(reader);
  options.sink.reset();
  const before = readCpu(reader);
  const benchBefore = process.cpuUsage();
  const from = monotonicUs();
  const started = performance.now();
  const load = await runLoad(sender, options.warmup, options.sends, clients);
  await options.sink.waitFor(options.sends * options.recipientsPerSend);
  const deliveredSeconds = (performance.now() - started) / 1000;
  await quiet(reader);
  const after = readCpu(reader);
  const bench = process.cpuUsage(benchBefore);
  return {
    acceptedSeconds: load.seconds,
    deliveredSeconds,
    latenciesMs: load.latenciesMs,
    benchMs: (bench.user + bench.system) / 1000,
    window: { from, to: monotonicUs() },
    server: {
      processMs: after.processMs - before.processMs,
      mainMs: after.mainMs === undefined || before.mainMs === undefined ? undefined : after.mainMs - before.mainMs,
    },
  };
};

const resultOf = (target: Target, clients: number, options: PhaseOptions, measured: Measured): PhaseResult => ({
  target,
  clients,
  sends: options.sends,
  recipients: options.sends * options.recipientsPerSend,
  acceptedSeconds: measured.acceptedSeconds,
  deliveredSeconds: measured.deliveredSeconds,
  latenciesMs: measured.latenciesMs,
  benchMs: measured.benchMs,
  server: measured.server,
});

/** Limits that never refuse the bench: it measures the send path, not the limits' answers. */
const UNLIMITED = { recipientsPerDay: 10_000_000, recipientsPerMinute: 10_000_000 };

/** `agentpost serve` (its own process, as Postfix is) relaying to the sink, with one mailbox funded for the phase and in the reviewed sending state. */
const startFundedAgentpost = async (options: PhaseOptions, nodeArgs: string[]) => {
  const agentpost = await startAgentpost('agentpost', {
    nodeArgs,
    config: {
      limits: {
        registrationsPerIpPerHour: 100_000,
        sendRequestsPerMinute: 10_000_000,
        sendingStates: { probation: UNLIMITED, standard: UNLIMITED, reviewed: UNLIMITED },
      },
      outbound: { relay: `smtp://127.0.0.1:${options.sink.port}` },
    },
  });
  try {
    // Operator commands (bin/main.ts), as an operator funds a mailbox: a process of their own beside the server.
    const operator = (...args: string[]) =>
      execFileSync(process.execPath, ['--import', 'tsx', 'bin/main.ts', ...args, '--config', agentpost.configFile], { stdio: 'pipe' });
    operator('credits', 'add', agentpost.address, String((options.warmup + options.sends) * options.recipientsPerSend));
    operator('sending', 'set', agentpost.address, 'reviewed');
    return agentpost;
  } catch (error) {
    await agentpost.stop();
    throw error;
  }
};

/** Where a profiled phase's server writes its profiles: kept under --profile-dir, else a temp folder removed after reading. */
const profileFolder = (target: string, clients: number, options: PhaseOptions): { path: string; remove: () => void } => {
  if (!options.profileDir) return tempDir('agentpost-bench-send-prof-');
  const path = join(options.profileDir, `${target}-${clients}`);
  mkdirSync(path, { recursive: true });
  return { path, remove: () => {} };
};

/** One phase against agentpost; under `--cpu-prof` when `profile`, which costs the server CPU of its own. */
export const agentpostPhase = async (target: 'rest' | 'mcp', clients: number, options: PhaseOptions, profile: boolean): Promise<PhaseResult> => {
  const profiles = profile ? profileFolder(target, clients, options) : null;
  try {
    const agentpost = await startFundedAgentpost(options, profiles ? ['--cpu-prof', `--cpu-prof-dir=${profiles.path}`] : []);
    let measured: Measured;
    try {
      const sender =
        target === 'rest' ? restSender(agentpost.baseUrl, agentpost.apiKey, options) : await mcpSender(agentpost.baseUrl, agentpost.apiKey, clients, options);
      try {
        measured = await measure(sender, clients, options, { processMs: () => cpuMs(agentpost.pid), mainMs: () => mainThreadCpuMs(agentpost.pid) });
      } finally {
        await sender.close();
      }
    } finally {
      // The profiles are written as the server exits.
      await agentpost.stop();
    }
    const result = resultOf(target, clients, options, measured);
    if (!profiles) return result;
    const split = splitProfile(readProfiles(profiles.path, agentpost.pid, process.cwd()), measured.window, options.top);
    return { ...result, profiled: { ...measured.server, split } };
  } finally {
    profiles?.remove();
  }
};

/**
 * REST through two `agentpost serve` processes on one data folder, one service (docs/design.md,
 * "Several processes on one store"): the clients split between them, both delivering to the
 * sink; the CPU is both processes'. Not profiled: the split reads one process's profile.
 */
export const twoProcessPhase = async (clients: number, options: PhaseOptions): Promise<PhaseResult> => {
  const first = await startFundedAgentpost(options, []);
  try {
    const second = await startAgentpostBeside(first, 'node-b');
    try {
      const senders = [restSender(first.baseUrl, first.apiKey, options), restSender(second.baseUrl, first.apiKey, options)];
      const sender: Sender = {
        send: (client, i) => senders[client % senders.length].send(client, i),
        close: async () => {
          await Promise.all(senders.map((one) => one.close()));
        },
      };
      const pids = [first.pid, second.pid];
      try {
        const reader = {
          processMs: () => pids.reduce((sum, pid) => sum + cpuMs(pid), 0),
          mainMs: () => pids.reduce((sum, pid) => sum + mainThreadCpuMs(pid), 0),
        };
        return resultOf('rest2', clients, options, await measure(sender, clients, options, reader));
      } finally {
        await sender.close();
      }
    } finally {
      await second.stop();
    }
  } finally {
    await first.stop();
  }
};

/** A private Postfix relaying to the same sink, SMTP clients on pooled connections. */
export const postfixPhase = async (clients: number, options: PhaseOptions): Promise<PhaseResult> => {
  const postfix = await startPostfix([`relayhost=[127.0.0.1]:${options.sink.port}`]);
  try {
    const sender = smtpSender(postfix.port, clients, options);
    try {
      return resultOf('postfix', clients, options, await measure(sender, clients, options, { processMs: () => postfix.cpuMs() }));
    } finally {
      await sender.close();
    }
  } finally {
    postfix.stop();
  }
};
