// npm run bench:events: time from the SMTP 250 to an SSE client (the eventsource package) getting
// message.received, at 50 messages/s with 100 connected streams (20 mailboxes with 5 streams
// each; every message reaches the 5 streams of its mailbox). Target: p99 under 100 ms.
// agentpost runs as its own process (`agentpost serve`); the SMTP clients and the streams share
// this one. Then the same load with a second process on the same data folder
// (docs/design.md, "Several processes on one store"): the mail to the first, the streams on the
// second, so each event crosses processes (the second learns of the commit by its look at the
// database's change counter). Options: --rate N (50), --seconds N (20), --mailboxes N (20),
// --streams N (5 each).
import { execFileSync } from 'node:child_process';
import { EventSource } from 'eventsource';
import nodemailer from 'nodemailer';
import { startAgentpost, startAgentpostBeside } from './ingest-targets.js';
import { argValue, fmt, percentile } from './lib.js';

const rate = argValue('rate', 50);
const seconds = argValue('seconds', 20);
const mailboxes = argValue('mailboxes', 20);
const streamsEach = argValue('streams', 5);
const total = rate * seconds;

const server = await startAgentpost('agentpost', {
  greetingDelayMs: 0,
  accounts: mailboxes,
  config: { events: { maxStreamsPerAccount: streamsEach, heartbeatSeconds: 15 } },
});
const targets = server.accounts.slice(0, mailboxes);

interface Measured {
  seen: number;
  expected: number;
  elapsed: number;
  streams: number;
  latencies: number[];
}

/** The load: mail to the MX on `mxPort`, every mailbox's streams on `streamsUrl`. */
const measure = async (mxPort: number, streamsUrl: string): Promise<Measured> => {
  /** When the 250 for uid n of mailbox m came back, and when each stream saw message.received for it. */
  const acked = targets.map(() => new Map<string, number>());
  const arrivals: { mailbox: number; uid: string; at: number }[] = [];
  let expected = 0;
  let seen = 0;
  /** Until the last message is sent, seen can catch up with expected without the run being over. */
  let sending = true;
  let allSeen: () => void = () => {};
  const finished = new Promise<void>((resolve) => {
    allSeen = resolve;
  });
  const streams = targets.flatMap((target, index) =>
    Array.from({ length: streamsEach }, () => {
      const source = new EventSource(`${streamsUrl}/api/v1/agent/events`, {
        fetch: (input, init) =>
          fetch(input, { ...init, headers: { ...init.headers, authorization: `Bearer ${target.apiKey}`, 'user-agent': 'agentpost-bench/1.0' } }),
      });
      source.addEventListener('message.received', (message) => {
        const at = performance.now();
        arrivals.push({ mailbox: index, uid: (JSON.parse(message.data) as { data: { uid: string } }).data.uid, at });
        seen += 1;
        if (!sending && seen >= expected) allSeen();
      });
      return source;
    }),
  );
  await Promise.all(streams.map((source) => new Promise((resolve) => source.addEventListener('open', resolve, { once: true }))));
  // One pooled connection per mailbox, one message at a time: its uids come back in the order sent.
  const transports = targets.map(() => nodemailer.createTransport({ host: '127.0.0.1', port: mxPort, ignoreTLS: true, pool: true, maxConnections: 1 }));
  // A mailbox's UIDs go on from the run before: the first UID of this run is one past the count so far.
  const sentPer = await Promise.all(targets.map((target) => inboxCount(streamsUrl, target.apiKey)));
  const queues = targets.map(() => Promise.resolve());
  const started = performance.now();
  for (let i = 0; i < total; i += 1) {
    const wait = started + (i * 1000) / rate - performance.now();
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
    const m = i % targets.length;
    expected += streamsEach;
    queues[m] = queues[m].then(async () => {
      await transports[m].sendMail({ from: 'load@example.org', to: targets[m].email, subject: `event ${i}`, text: 'hello' });
      sentPer[m] += 1;
      acked[m].set(String(sentPer[m]), performance.now());
    });
  }
  await Promise.all(queues);
  sending = false;
  if (seen >= expected) allSeen();
  await Promise.race([finished, new Promise((resolve) => setTimeout(resolve, 10_000))]);
  const elapsed = (performance.now() - started) / 1000;
  for (const source of streams) source.close();
  for (const transport of transports) transport.close();
  // Matched at the end: an event may reach its stream before this process has handled the 250.
  const latencies = arrivals.flatMap(({ mailbox, uid, at }) => {
    const sentAt = acked[mailbox].get(uid);
    return sentAt === undefined ? [] : [Math.max(0, at - sentAt)];
  });
  return { seen, expected, elapsed, streams: streams.length, latencies };
};

const inboxCount = async (baseUrl: string, apiKey: string): Promise<number> => {
  const response = await fetch(`${baseUrl}/api/v1/agent/inbox?limit=1`, { headers: { authorization: `Bearer ${apiKey}` } });
  return ((await response.json()) as { totalMessages: number }).totalMessages;
};

const report = (what: string, m: Measured): void => {
  console.log(`${what}: ${total} messages at ${rate}/s over ${fmt(m.elapsed, 1)} s to ${mailboxes} mailboxes, ${m.streams} streams (${streamsEach} each)`);
  console.log(
    `  events seen ${m.seen} of ${m.expected}; latency from the 250 to the stream: p50 ${fmt(percentile(m.latencies, 50), 1)} ms, p99 ${fmt(percentile(m.latencies, 99), 1)} ms, max ${fmt(Math.max(...m.latencies), 1)} ms (target p99 < 100 ms)`,
  );
  console.log(`  ${execFileSync('uptime').toString().trim()}`);
};

try {
  report('bench:events, one process', await measure(server.port, server.baseUrl));
  const beside = await startAgentpostBeside(server, 'node-b');
  try {
    report('bench:events, two processes on one data folder (mail to the first, streams on the second)', await measure(server.port, beside.baseUrl));
  } finally {
    await beside.stop();
  }
} finally {
  await server.stop();
}
