// Two `agentpost serve` processes on one data folder (docs/design.md, "Several processes:
// wake-ups and exactness"): mail delivered through one wakes an IMAP IDLE, an event stream and
// a wait_for_email on the other within a generous bound, flags and expunges reach the IDLE too (the delays are printed, never held to
// a tight figure), and the event log read by `seq > cursor` misses and repeats no event while
// both processes log at once.
import { performance } from 'node:perf_hooks';
import Database from 'better-sqlite3';
import { join } from 'node:path';
import t from 'tap';
import { startCluster } from './helpers/cluster.js';
import { openStream, opened } from './helpers/event-stream.js';
import { rawImap } from './helpers/imap.js';
import { callTool, mcpClient } from './helpers/mcp.js';
import { restCall } from './helpers/process.js';
import { smtpSend } from './helpers/smtp.js';

// Two processes on a loaded 2-core machine.
t.setTimeout(600_000);

const CRLF = '\r\n';
const MESSAGES = 30;
/** Far above the 100 ms the design asks at p99: the test shows the wake-up, not the machine's speed. */
const GENEROUS_MS = 3_000;
/**
 * Every message into its mailbox before its 250: the inbound queue's drain is not yet claimed
 * per process (issue 32), so two processes draining one burst would store a message twice.
 */
const env = { AGENTPOST_SMTP_QUEUE_MAX_MESSAGES: '0' };

const percentile = (values: readonly number[], fraction: number): number => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil(fraction * sorted.length) - 1)];
};

const summary = (values: readonly number[]): string =>
  `p50 ${percentile(values, 0.5).toFixed(1)} ms, p99 ${percentile(values, 0.99).toFixed(1)} ms, max ${Math.max(...values).toFixed(1)} ms`;

t.test('mail through A wakes IMAP IDLE, an event stream and wait_for_email on B', async (t) => {
  const { nodes } = await startCluster(t, { nodes: 2, env });
  const [a, b] = nodes;
  const agent = (await restCall(a.baseUrl, 'POST', '/api/v1/agent/register', { body: { agentId: 'wake.test' } })).body as { email: string; apiKey: string };

  const idler = await rawImap(t, b.imapPort);
  idler.send(`i1 LOGIN ${agent.email} ${agent.apiKey}${CRLF}i2 SELECT INBOX${CRLF}`);
  await idler.read(/^i2 OK/m);
  idler.send(`i3 IDLE${CRLF}`);
  await idler.read(/^\+ /m);
  const stream = openStream(t, b.baseUrl, agent.apiKey);
  await opened(stream);
  const mcp = await mcpClient(t, b.baseUrl, { key: agent.apiKey });

  const delays = { idle: [] as number[], stream: [] as number[], wait: [] as number[] };
  for (let index = 1; index <= MESSAGES; index += 1) {
    const at = () => performance.now();
    const idled = idler.read(new RegExp(`^\\* ${index} EXISTS`, 'm')).then(at);
    const streamed = stream.waitForCount(index).then(at);
    const waited = callTool(mcp, 'wait_for_email', { afterUid: String(index - 1), timeoutSeconds: 30 }).then((outcome) => ({ outcome, at: at() }));
    // The wait is under way on B before the mail comes (it would otherwise find the message at once).
    await new Promise((resolve) => setTimeout(resolve, 60));
    await smtpSend(a.smtpPort, { from: 'sender@example.com', to: agent.email, subject: `wake ${index}`, text: 'through A' });
    const accepted = performance.now();
    const [idleAt, streamAt, wait] = await Promise.all([idled, streamed, waited]);
    t.equal(wait.outcome.body.emails?.length, 1, `the wait on B returned message ${index}`);
    t.equal(wait.outcome.body.timedOut, false);
    delays.idle.push(Math.max(0, idleAt - accepted));
    delays.stream.push(Math.max(0, streamAt - accepted));
    delays.wait.push(Math.max(0, wait.at - accepted));
  }
  for (const [name, values] of Object.entries(delays)) {
    t.comment(`${name} on B after the 250 from A, ${MESSAGES} messages: ${summary(values)}`);
    t.ok(percentile(values, 0.99) < GENEROUS_MS, `${name} woken on B (p99 under ${GENEROUS_MS} ms)`);
  }
  t.same(
    stream.events.map((event) => event.data.data.uid),
    Array.from({ length: MESSAGES }, (_, index) => String(index + 1)),
    'the stream on B got every message, in order',
  );
  // Flag changes and expunges through A reach the IDLE on B too (a new mod-sequence of the folder).
  const onA = await rawImap(t, a.imapPort);
  onA.send(`a1 LOGIN ${agent.email} ${agent.apiKey}${CRLF}a2 SELECT INBOX${CRLF}`);
  await onA.read(/^a2 OK/m);
  const flagged = idler.read(/^\* 1 FETCH \(.*FLAGS \([^)]*\\Flagged/m);
  onA.send(`a3 UID STORE 1 +FLAGS (\\Flagged)${CRLF}`);
  await onA.read(/^a3 OK/m);
  t.ok(await flagged, 'a flag set through A is pushed to the IDLE on B');
  const expunged = idler.read(/^\* 2 EXPUNGE/m);
  onA.send(`a4 UID STORE 2 +FLAGS.SILENT (\\Deleted)${CRLF}a5 UID EXPUNGE 2${CRLF}`);
  await onA.read(/^a5 OK/m);
  t.ok(await expunged, 'an expunge through A is pushed to the IDLE on B');
  idler.send(`DONE${CRLF}`);
  await idler.read(/^i3 OK/m);
});

t.test('events logged through both processes at once reach a stream in seq order, none skipped', async (t) => {
  const { nodes, dataDir } = await startCluster(t, { nodes: 2, env });
  const [a, b] = nodes;
  const agent = (await restCall(a.baseUrl, 'POST', '/api/v1/agent/register', { body: { agentId: 'log.test' } })).body as { email: string; apiKey: string };
  const onB = openStream(t, b.baseUrl, agent.apiKey);
  const onA = openStream(t, a.baseUrl, agent.apiKey);
  await Promise.all([opened(onA), opened(onB)]);
  const PER_NODE = 20;
  await Promise.all(
    [a, b].flatMap((node, which) =>
      Array.from({ length: PER_NODE }, (_, index) =>
        smtpSend(node.smtpPort, { from: 'sender@example.com', to: agent.email, subject: `log ${which}-${index}`, text: 'concurrent' }),
      ),
    ),
  );
  const total = 2 * PER_NODE;
  const [seenOnA, seenOnB] = await Promise.all([onA.waitForCount(total), onB.waitForCount(total)]);
  const db = new Database(join(dataDir, 'agentpost.db'), { readonly: true });
  t.teardown(() => db.close());
  const logged = db
    .prepare("SELECT e.id FROM webhook_events e JOIN accounts a ON a.id = e.account_id WHERE e.type = 'message.received' ORDER BY e.seq")
    .pluck()
    .all() as string[];
  t.equal(logged.length, total, 'one event per message in the log');
  t.same(
    seenOnB.map((event) => event.id),
    logged,
    'the stream on B: every event of the log once, in seq order',
  );
  t.same(
    seenOnA.map((event) => event.id),
    logged,
    'the stream on A too',
  );
});
