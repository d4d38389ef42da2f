// Fault suite, hostile corpus: messages anyone on the Internet can send (test/helpers/hostile.ts)
// go in over real SMTP and are read over REST, MCP and IMAP (imapflow) while a probe measures
// /healthz. Each is stored and readable with what can be read of it (its top-level header),
// or, with a header over the limits, refused with 552 5.3.4; none stalls the process
// (test/fault-headers.test.ts bounds that). The probe's p99 and the peak RSS are printed, not asserted (tests
// never assert on wall-clock time). Here the clients (nodemailer, fetch, imapflow parsing a
// 500-part BODYSTRUCTURE) share the event loop with the server, so the figure is an upper
// bound; bench:mixed runs the server in its own process and prints the verdict.
import t, { type Test } from 'tap';
import { startApp, type TestApp } from './helpers/app.js';
import { hostileCorpus, type HostileMessage } from './helpers/hostile.js';
import { imapLogin } from './helpers/imap.js';
import { callTool, mcpClient } from './helpers/mcp.js';
import { smtpSendRaw } from './helpers/smtp.js';

interface Probe {
  stop(): { samples: number[]; peakRss: number };
}

/** Asks /healthz every 20 ms (one request at a time) and samples the RSS. */
const startProbe = (app: TestApp): Probe => {
  const samples: number[] = [];
  let peakRss = process.memoryUsage().rss;
  let running = true;
  const loop = async (): Promise<void> => {
    while (running) {
      const started = performance.now();
      await fetch(`${app.baseUrl}/healthz`).then((response) => response.text());
      samples.push(performance.now() - started);
      peakRss = Math.max(peakRss, process.memoryUsage().rss);
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
  };
  const done = loop();
  return {
    stop() {
      running = false;
      void done;
      return { samples, peakRss };
    },
  };
};

const percentile = (values: number[], p: number): number => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? 0;
};

t.test('the hostile corpus is stored and read over REST, MCP and IMAP with its header kept, or refused over the header limits', async (t) => {
  const app = await startApp(t);
  const agent = await app.register();
  const mcp = await mcpClient(t, app.baseUrl, { key: agent.apiKey });
  const corpus = hostileCorpus();
  const probe = startProbe(app);
  const stored: HostileMessage[] = [];
  for (const message of corpus) {
    const sent = await smtpSendRaw(app.smtpPort, 'mallory@example.net', [agent.email], message.raw).then(
      (info) => info.response,
      (error: { response?: string }) => error.response ?? String(error),
    );
    if (message.refusal) {
      t.match(sent, message.refusal, `${message.name}: refused`);
      continue;
    }
    t.match(sent, /^250 /, `${message.name}: accepted`);
    stored.push(message);
    await readEverywhere(t, app, agent.apiKey, mcp, String(stored.length), message);
  }
  t.equal((await app.api('GET', '/api/v1/agent/inbox', { key: agent.apiKey })).body.totalMessages, stored.length, 'nothing refused was stored');
  const client = await imapLogin(t, app.imapPort, agent.email, agent.apiKey);
  await client.mailboxOpen('INBOX');
  for (const [index, message] of stored.entries()) {
    const fetched = await client.fetchOne(String(index + 1), { uid: true, envelope: true, bodyStructure: true, source: true }, { uid: true });
    t.ok(fetched, `${message.name}: IMAP FETCH answers`);
    if (!fetched) continue;
    const source = fetched.source as Buffer;
    t.ok(source.subarray(source.length - message.raw.length).equals(message.raw), `${message.name}: IMAP serves the bytes as received`);
    if (message.subject) t.equal(fetched.envelope?.subject, message.subject, `${message.name}: ENVELOPE subject`);
    t.ok(fetched.bodyStructure, `${message.name}: BODYSTRUCTURE`);
  }
  const { samples, peakRss } = probe.stop();
  t.ok(samples.length > 0, 'the probe ran');
  t.comment(
    `hostile corpus: /healthz p99 ${percentile(samples, 99).toFixed(1)} ms, max ${Math.max(...samples).toFixed(1)} ms over ${samples.length} probes; peak RSS ${(peakRss / 1048576).toFixed(0)} MB`,
  );
});

const readEverywhere = async (
  t: Test,
  app: TestApp,
  key: string,
  mcp: Awaited<ReturnType<typeof mcpClient>>,
  uid: string,
  message: HostileMessage,
): Promise<void> => {
  const read = await app.api('GET', `/api/v1/agent/email/${uid}?markAsRead=false`, { key });
  t.equal(read.status, 200, `${message.name}: REST read`);
  if (message.subject) t.equal(read.body.subject, message.subject, `${message.name}: subject kept`);
  else t.ok(read.body.subject.length > 0, `${message.name}: a subject, whatever its bytes`);
  t.equal(read.body.from?.email, 'mallory@example.net', `${message.name}: sender kept`);
  t.ok(read.body.text.length <= 1024 * 1024, `${message.name}: bounded text`);
  t.not(read.body.text, message.raw.toString('utf8'), `${message.name}: the text is not the raw message`);
  const viaMcp = await callTool(mcp, 'get_email', { id: uid, markAsRead: false });
  t.notOk(viaMcp.isError, `${message.name}: MCP get_email`);
  t.equal(viaMcp.body.subject, read.body.subject, `${message.name}: MCP answers the same`);
};
