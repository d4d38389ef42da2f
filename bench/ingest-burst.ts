import { type MailboxTarget, startAgentpostMailboxes, startPostfixDovecot } from './burst-targets.js';
import { BenchImap, statusMessages } from './imap-client.js';
import { fmt, percentile } from './lib.js';
import { runLoad } from './smtp-load.js';

/**
 * bench:ingest's `burst` part: how fast a burst reaches its mailboxes, from the SMTP
 * 250 to the message visible over IMAP, for agentpost and for Postfix handing the same burst to
 * Dovecot over LMTP into Maildir (bench/burst-targets.ts), fresh servers each round, the order
 * alternating per round. The burst is `count` messages over `sessions` reused connections,
 * spread round-robin over `mailboxes` recipients. One IMAP session per mailbox, logged in
 * before the burst, asks STATUS INBOX (MESSAGES) every `pollMs` (50 ms) from the first
 * connection on; a message is visible once its mailbox's count includes it. Printed per service: the
 * acceptance rate (messages / first connection to the last 250), the time from the last 250 to
 * the last message visible, the sustained rate into the mailboxes (messages / first 250 to all
 * visible) and the service's CPU per message over all of it; then agentpost's sustained rate
 * over the peer's per round (target: at least 1.5x).
 */

export interface BurstRun {
  count: number;
  mailboxes: number;
  sessions: number;
  rounds: number;
  /** Between one mailbox's STATUS answer and its next STATUS. */
  pollMs: number;
  executable?: string;
  payloadsTo: (to: readonly string[], from: number, n: number) => Buffer[];
}

interface Burst {
  /** Messages per second from the first connection to the last 250. */
  acceptRate: number;
  /** Seconds from the first connection to the last 250. */
  lastAcceptSeconds: number;
  /** Seconds from the last 250 until every message was visible. */
  lastVisibleAfterSeconds: number;
  /** Messages of the burst visible at the last poll before the last 250. */
  visibleAtLastAccept: number;
  /** Messages per second from the first 250 until every message was visible. */
  deliveredRate: number;
  /** The service's CPU over the burst and its delivery, in ms per message. */
  cpuPerMessage: number;
}

/** A burst not visible by then lost mail (or the service is stuck): the run stops. */
const VISIBLE_WITHIN_MS = 600_000;
const AGENTPOST = 'agentpost';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const sum = (values: number[]): number => values.reduce((total, value) => total + value, 0);

const loggedIn = async (port: number, login: string): Promise<BenchImap> => {
  const client = await BenchImap.open(port);
  await client.command(`LOGIN ${login}`);
  return client;
};

const inboxCount = async (client: BenchImap): Promise<number> => statusMessages(await client.command('STATUS INBOX (MESSAGES)'));

/** How many of `n` messages dealt round-robin over `mailboxes` go to mailbox `index` (runLoad's and payloadsTo's order). */
const shareOf = (n: number, index: number, mailboxes: number): number => Math.max(0, Math.ceil((n - index) / mailboxes));

/** Asks one mailbox's count every `pollMs`, telling `seen` each, until it holds `want`; resolves with when it first did. */
const pollUntil = async (client: BenchImap, want: number, pollMs: number, seen: (count: number) => void, deadline: number): Promise<number> => {
  for (;;) {
    const count = await inboxCount(client);
    seen(count);
    if (count >= want) return performance.now();
    if (performance.now() > deadline) throw new Error(`${count} of ${want} messages visible ${VISIBLE_WITHIN_MS / 1000} s after the burst began`);
    await sleep(pollMs);
  }
};

/** `n` messages (numbered from `from`) to the target's mailboxes, timed from the first connection until all are visible. */
const burst = async (target: MailboxTarget, clients: BenchImap[], n: number, from: number, run: BurstRun): Promise<Burst> => {
  const addresses = target.mailboxes.map((mailbox) => mailbox.address);
  const payloads = run.payloadsTo(addresses, from, n);
  const before = await Promise.all(clients.map(inboxCount));
  const latest = [...before];
  const cpuBefore = target.cpuMs();
  const deadline = performance.now() + VISIBLE_WITHIN_MS;
  const visible = Promise.all(
    clients.map((client, i) => pollUntil(client, before[i] + shareOf(n, i, clients.length), run.pollMs, (count) => (latest[i] = count), deadline)),
  );
  const load = await runLoad({ port: target.smtpPort, to: addresses, payloads, sessions: run.sessions, reuse: true });
  const visibleAtLastAccept = sum(latest) - sum(before);
  const allVisibleAt = Math.max(...(await visible));
  return {
    acceptRate: n / ((load.lastAcceptedAt - load.startedAt) / 1000),
    lastAcceptSeconds: (load.lastAcceptedAt - load.startedAt) / 1000,
    lastVisibleAfterSeconds: (allVisibleAt - load.lastAcceptedAt) / 1000,
    visibleAtLastAccept,
    deliveredRate: n / ((allVisibleAt - load.firstAcceptedAt) / 1000),
    cpuPerMessage: (target.cpuMs() - cpuBefore) / n,
  };
};

/** A warm-up burst (JIT and statements; Postfix's and Dovecot's workers forked), then the measured one. */
const measure = async (target: MailboxTarget, run: BurstRun): Promise<Burst> => {
  const clients = await Promise.all(target.mailboxes.map((mailbox) => loggedIn(target.imapPort, mailbox.login)));
  try {
    await burst(target, clients, Math.min(run.count, 2000), 0, run);
    return await burst(target, clients, run.count, 100_000, run);
  } finally {
    for (const client of clients) client.close();
  }
};

const report = (name: string, b: Burst): void =>
  console.log(
    `burst  ${name.padEnd(50)} accepted ${fmt(b.acceptRate, 0).padStart(5)} msg/s (last 250 at ${fmt(b.lastAcceptSeconds, 1)} s, ${b.visibleAtLastAccept} visible then); ` +
      `last visible ${fmt(b.lastVisibleAfterSeconds, 1)} s after the last 250; into mailboxes ${fmt(b.deliveredRate, 0).padStart(5)} msg/s; ` +
      `server CPU ${fmt(b.cpuPerMessage, 3)} ms/msg`,
  );

const starters = (run: BurstRun): (() => Promise<MailboxTarget | { skip: string }>)[] => [
  () => startAgentpostMailboxes(run.mailboxes, run.executable),
  () => startPostfixDovecot(run.mailboxes),
];

/** Each service's measured burst in this round, by name; a service that cannot run here is said so and left out. */
const runRound = async (run: BurstRun, round: number): Promise<Map<string, Burst>> => {
  const inRound = new Map<string, Burst>();
  // Alternate which goes first, so neither always meets the warmer machine.
  const order = round % 2 === 0 ? starters(run) : starters(run).reverse();
  for (const start of order) {
    const target = await start();
    if ('skip' in target) {
      console.log(`burst  peer skipped: ${target.skip}`);
      continue;
    }
    try {
      const measured = await measure(target, run);
      report(target.name, measured);
      inRound.set(target.name, measured);
    } finally {
      await target.stop();
    }
  }
  return inRound;
};

const ratioLine = (label: string, ratios: number[], target: string): string =>
  `burst: ${label} per round ${ratios.map((ratio) => `${fmt(ratio)}x`).join(' ')}, median ${fmt(percentile(ratios, 50))}x${target}`;

export const burstPart = async (run: BurstRun): Promise<void> => {
  console.log(
    `burst: ${run.count} messages over ${run.sessions} reused connections to ${run.mailboxes} mailboxes, visible = IMAP STATUS every ${run.pollMs} ms, ${run.rounds} round(s)`,
  );
  const rounds: Map<string, Burst>[] = [];
  for (let round = 0; round < run.rounds; round += 1) rounds.push(await runRound(run, round));
  const peer = [...(rounds[0]?.keys() ?? [])].find((name) => name !== AGENTPOST);
  if (!peer) return;
  const ratios = (figure: (b: Burst) => number) => rounds.map((inRound) => figure(inRound.get(AGENTPOST) as Burst) / figure(inRound.get(peer) as Burst));
  console.log(
    ratioLine(
      `${AGENTPOST} / ${peer} into mailboxes`,
      ratios((b) => b.deliveredRate),
      ' (target >= 1.5x)',
    ),
  );
  console.log(
    ratioLine(
      `${AGENTPOST} / ${peer} accepted`,
      ratios((b) => b.acceptRate),
      '',
    ),
  );
};
