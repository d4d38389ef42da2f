/**
 * bench:ingest's `threading` part: the ingest rate with threads assigned at ingest against
 * the same server with threads.enabled false, in the same run, round by round. The messages
 * are conversations of 8: each names the one before in In-Reply-To and the whole chain in
 * References (RFC 5322 section 3.6.4), so threading looks up and records ids as real replies
 * make it do. Target: within 10% of the rate without threading.
 */
import { startAgentpost } from './ingest-targets.js';
import { fmt, messageOfSize } from './lib.js';
import { dataPayload, runLoad } from './smtp-load.js';

export interface ThreadingOptions {
  count: number;
  sessions: number;
  bytes: number;
  rounds: number;
  executable?: string;
  sentence: (words: number) => string;
}

const CONVERSATION = 8;

const conversationHeaders = (index: number): string[] => {
  const position = index % CONVERSATION;
  if (position === 0) return [];
  const chain = Array.from({ length: position }, (_, i) => `<bench-${index - position + i}@example.org>`);
  return [`In-Reply-To: ${chain[chain.length - 1]}`, `References: ${chain.join(' ')}`];
};

const payloads = (options: ThreadingOptions, to: string, from: number, n: number): Buffer[] =>
  Array.from({ length: n }, (_, i) => dataPayload(messageOfSize(from + i, to, options.bytes, options.sentence, conversationHeaders(from + i))));

const rateOf = async (options: ThreadingOptions, threads: boolean): Promise<number> => {
  const target = await startAgentpost(threads ? 'threads on' : 'threads off', {
    executable: options.executable,
    greetingDelayMs: 0,
    config: { threads: { enabled: threads, subjectWindowDays: 7 } },
  });
  try {
    const warm = Math.min(2000, options.count);
    await runLoad({ port: target.port, to: target.address, payloads: payloads(options, target.address, 0, warm), sessions: options.sessions, reuse: true });
    await target.drained();
    const started = performance.now();
    await runLoad({
      port: target.port,
      to: target.address,
      payloads: payloads(options, target.address, 1_000_000, options.count),
      sessions: options.sessions,
      reuse: true,
    });
    // Threads are assigned at delivery, which a burst's queue puts after the 250s: the rate into the mailboxes.
    await target.drained();
    return options.count / ((performance.now() - started) / 1000);
  } finally {
    await target.stop();
  }
};

export const threading = async (options: ThreadingOptions): Promise<void> => {
  console.log(`threading: ${options.count} messages per target (conversations of ${CONVERSATION}), ${options.sessions} sessions, reused connections`);
  const ratios: number[] = [];
  for (let round = 0; round < options.rounds; round += 1) {
    // Alternating which goes first, so a change of the machine's load does not favour one.
    const order = round % 2 === 0 ? [true, false] : [false, true];
    const rates = new Map<boolean, number>();
    for (const threads of order) rates.set(threads, await rateOf(options, threads));
    const on = rates.get(true) as number;
    const off = rates.get(false) as number;
    ratios.push(on / off);
    console.log(`  round ${round + 1}: threads on ${fmt(on, 0)} msg/s, off ${fmt(off, 0)} msg/s: ${fmt((on / off) * 100, 1)}% (target >= 90%)`);
  }
  const sorted = [...ratios].sort((a, b) => a - b);
  console.log(
    `  median ${fmt(sorted[Math.floor(sorted.length / 2)] * 100, 1)}% over ${ratios.length} round(s), ${fmt(sorted[0] * 100, 1)}% to ${fmt(sorted[sorted.length - 1] * 100, 1)}%`,
  );
};
