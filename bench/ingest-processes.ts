import { startAgentpost, startAgentpostBeside, type Agentpost } from './ingest-targets.js';
import { fmt, percentile } from './lib.js';
import { cpuMs } from './proc.js';
import { type LoadResult, runLoad } from './smtp-load.js';

/**
 * bench:ingest's `processes` part (`--only processes`): one `agentpost serve` against two on one
 * data folder (docs/design.md, "Several processes on one store"), in the same round and under
 * the same load: the sessions split evenly between the two MX ports. Printed per mode: the rate
 * of 250s, the rate into the mailboxes (until the inbound queue is empty) and the server CPU per
 * message (both processes together), and per round the ratio of two processes to one.
 */

type Mode = 'reused' | 'new connection';
const MODES: readonly Mode[] = ['reused', 'new connection'];

export interface ProcessesRun {
  rounds: number;
  count: number;
  sessions: number;
  executable?: string;
  payloads: (to: string, from: number, n: number) => Buffer[];
}

interface Measured {
  rate: number;
  deliveredRate: number;
  cpuPerMessage: number;
}

interface Service {
  ports: number[];
  pids: number[];
  address: string;
  drained(): Promise<void>;
}

/** `payloads` split into `parts` interleaved shares. */
const shares = <T>(items: T[], parts: number): T[][] => Array.from({ length: parts }, (_, part) => items.filter((_, i) => i % parts === part));

const measure = async (service: Service, mode: Mode, run: ProcessesRun): Promise<Measured> => {
  const reuse = mode === 'reused';
  const load = (payloads: Buffer[]): Promise<LoadResult[]> =>
    Promise.all(
      shares(payloads, service.ports.length).map((share, i) =>
        runLoad({ port: service.ports[i], to: service.address, payloads: share, sessions: run.sessions / service.ports.length, reuse }),
      ),
    );
  // A warm-up in the same mode: connections, JIT, statements.
  await load(run.payloads(service.address, 0, Math.min(run.count, 2000)));
  await service.drained();
  const payloads = run.payloads(service.address, 100_000, run.count);
  const cpuBefore = service.pids.reduce((sum, pid) => sum + cpuMs(pid), 0);
  const started = performance.now();
  const results = await load(payloads);
  const seconds = Math.max(...results.map((result) => result.seconds));
  await service.drained();
  const deliveredSeconds = (performance.now() - started) / 1000;
  const cpu = service.pids.reduce((sum, pid) => sum + cpuMs(pid), 0) - cpuBefore;
  return { rate: run.count / seconds, deliveredRate: run.count / deliveredSeconds, cpuPerMessage: cpu / run.count };
};

const report = (mode: Mode, name: string, m: Measured): void =>
  console.log(
    `${mode.padEnd(14)} ${name.padEnd(30)} ${fmt(m.rate, 0).padStart(6)} msg/s  in mailboxes ${fmt(m.deliveredRate, 0).padStart(6)} msg/s  server CPU ${fmt(m.cpuPerMessage, 3)} ms/msg`,
  );

const alone = (first: Agentpost): Service => ({ ports: [first.port], pids: [first.pid], address: first.address, drained: first.drained });

export const processesPart = async (run: ProcessesRun): Promise<void> => {
  console.log(`processes: one agentpost against two on one data folder, ${run.sessions} sessions, ${run.rounds} round(s)`);
  const ratios: Record<Mode, number[]> = { reused: [], 'new connection': [] };
  for (let round = 0; round < run.rounds; round += 1) {
    const rates = new Map<string, number>();
    // Alternate which goes first, so neither always meets the warmer machine.
    for (const processes of round % 2 === 0 ? [1, 2] : [2, 1]) {
      const first = await startAgentpost(`${processes} process${processes > 1 ? 'es' : ''}`, { executable: run.executable });
      const second = processes > 1 ? await startAgentpostBeside(first, 'node-b', run.executable) : null;
      const service = second
        ? { ports: [first.port, second.port], pids: [first.pid, second.pid], address: first.address, drained: first.drained }
        : alone(first);
      try {
        for (const mode of MODES) {
          const measured = await measure(service, mode, run);
          report(mode, first.name, measured);
          rates.set(`${mode}|${processes}`, measured.rate);
        }
      } finally {
        await second?.stop();
        await first.stop();
      }
    }
    for (const mode of MODES) ratios[mode].push((rates.get(`${mode}|2`) ?? NaN) / (rates.get(`${mode}|1`) ?? NaN));
  }
  for (const mode of MODES) {
    console.log(
      `${mode}: two processes / one per round ${ratios[mode].map((ratio) => `${fmt(ratio)}x`).join(' ')}, median ${fmt(percentile(ratios[mode], 50))}x`,
    );
  }
};
