// A read is served from what ingest stored (src/services/mail/bodies.ts): it parses nothing.
// Every parse runs on a parse worker under a time budget; one that overruns it is cut off
// (the thread is replaced) and the message is still stored and readable, with contentFallback.
// Mail stored without a body (before bodies existed) gets one through the parse worker.
import { Worker } from 'node:worker_threads';
import t from 'tap';
import type { ParseRequest } from '../src/workers/parse-protocol.js';
import type { ParseWorkerFactory } from '../src/workers/parse-pool.js';
import { sourceParseWorker } from '../src/workers/parse-worker-source.js';
import { startApp } from './helpers/app.js';
import { fixture } from './helpers/mail.js';
import { callTool, mcpClient } from './helpers/mcp.js';
import { smtpSendRaw } from './helpers/smtp.js';

/** Real parse workers that count the parse requests sent to them. */
const countingThreads = (): { factory: ParseWorkerFactory; requests: () => number } => {
  let requests = 0;
  const factory: ParseWorkerFactory = () => {
    const worker = sourceParseWorker();
    const post = worker.postMessage.bind(worker);
    worker.postMessage = (value: ParseRequest[], transfer?: readonly ArrayBuffer[]) => {
      requests += value.length;
      post(value, transfer as ArrayBuffer[]);
    };
    return worker;
  };
  return { factory, requests: () => requests };
};

/** A thread that loads and then never answers: a parse that runs forever. */
const hangingWorker: ParseWorkerFactory = () =>
  new Worker(
    `const { parentPort } = require('node:worker_threads');
   parentPort.postMessage({ type: 'ready' });
   parentPort.on('message', () => {});`,
    { eval: true },
  );

const plain = (subject: string, text: string): Buffer =>
  Buffer.from(`From: Alice <alice@example.org>\r\nTo: x@example.org\r\nSubject: ${subject}\r\nMessage-ID: <${subject}@example.org>\r\n\r\n${text}\r\n`);

t.test('reads over REST and MCP parse nothing: they answer from the stored body', async (t) => {
  const threads = countingThreads();
  const app = await startApp(t, {}, { parseWorker: threads.factory });
  const agent = await app.register();
  await smtpSendRaw(app.smtpPort, 'sender@example.org', [agent.email], fixture('attachments.eml'));
  t.equal(threads.requests(), 1, 'one parse, at ingest');
  const mcp = await mcpClient(t, app.baseUrl, { key: agent.apiKey });
  for (let round = 0; round < 5; round += 1) {
    const read = await app.api('GET', '/api/v1/agent/email/1?markAsRead=false', { key: agent.apiKey });
    t.equal(read.status, 200);
    t.equal(read.body.attachments.length, 3);
    const viaMcp = await callTool(mcp, 'get_email', { id: '1', markAsRead: false });
    t.notOk(viaMcp.isError);
    t.equal(viaMcp.body.attachments.length, 3);
  }
  t.equal(threads.requests(), 1, 'ten reads later, still the one parse');
});

t.test('a parse over its time budget is cut off; the message is stored and readable from the bounded fallback', async (t) => {
  let started = 0;
  const factory: ParseWorkerFactory = () => (started++ === 0 ? hangingWorker() : sourceParseWorker());
  // Long enough that a fresh thread's cold first parse fits in it on a busy machine.
  const app = await startApp(t, { smtp: { parseTimeoutMs: 1500 } }, { parseWorker: factory });
  const agent = await app.register();
  // Both wait on the hanging thread: the one it is on is cut off, the other goes to the new thread as it was.
  const sent = await Promise.all(
    ['one', 'two'].map((subject) => smtpSendRaw(app.smtpPort, 'alice@example.org', [agent.email], plain(subject, `${subject} body`))),
  );
  for (const reply of sent) t.match(reply.response, /^250 /);
  t.equal(started, 2, 'the thread was replaced');
  const reads = await Promise.all(['1', '2'].map((id) => app.api('GET', `/api/v1/agent/email/${id}`, { key: agent.apiKey })));
  const cut = reads.filter((read) => read.body.contentFallback === 'timeout');
  const full = reads.filter((read) => read.body.contentFallback === undefined);
  t.equal(cut.length, 1, 'the parse that overran is kept from the bounded fallback, and the read says so');
  t.equal(full.length, 1, 'the message queued behind it got the full parse');
  const stuck = cut[0].body;
  t.equal(stuck.text, `${stuck.subject} body\r\n`, 'its text part, decoded by the fallback');
  t.same(stuck.from, { name: 'Alice', email: 'alice@example.org' });
  t.equal(stuck.messageId, `<${stuck.subject}@example.org>`);
  t.equal(full[0].body.text, `${full[0].body.subject} body\n`);
});

t.test('mail stored without a body gets one through the parse worker: by the first read, or by the backfill', async (t) => {
  const threads = countingThreads();
  const app = await startApp(t, {}, { parseWorker: threads.factory });
  const agent = await app.register();
  for (const subject of ['older', 'oldest']) await smtpSendRaw(app.smtpPort, 'alice@example.org', [agent.email], plain(subject, `${subject} text`));
  // As if stored before migration 11: no body rows, both listed for the backfill.
  app.app.store.db.exec('DELETE FROM message_bodies; INSERT INTO body_backfill (message_rowid) SELECT id FROM messages;');
  const before = threads.requests();
  const read = await app.api('GET', '/api/v1/agent/email/1', { key: agent.apiKey });
  t.equal(read.body.text, 'older text\n');
  t.equal(threads.requests(), before + 1, 'the read had it built on the parse worker');
  await app.api('GET', '/api/v1/agent/email/1', { key: agent.apiKey });
  t.equal(threads.requests(), before + 1, 'and stored: the next read parses nothing');
  app.app.queues.bodies.kick();
  await app.app.queues.bodies.idle();
  t.equal(threads.requests(), before + 2, 'the backfill built the other one');
  const count = app.app.store.db.prepare('SELECT (SELECT count(*) FROM message_bodies) AS bodies, (SELECT count(*) FROM body_backfill) AS listed').get();
  t.same(count, { bodies: 2, listed: 0 });
});

t.test('a read with a large body is answered in pieces (src/http/json-body.ts): the same JSON as in one piece', async (t) => {
  const app = await startApp(t);
  const agent = await app.register();
  // 300,000 characters of html, pairs and escapes among them: over the piece limit (256 Ki characters).
  const html = `<html><body>${'<p>caf\u00e9 \ud83d\ude00 "quoted" \\ back</p>\n'.repeat(10_000)}</body></html>`;
  const raw = Buffer.from(
    `From: a@example.org\r\nSubject: large\r\nContent-Type: text/html; charset=utf-8\r\nContent-Transfer-Encoding: 8bit\r\n\r\n${html.replace(/\n/g, '\r\n')}\r\n`,
  );
  await smtpSendRaw(app.smtpPort, 'a@example.org', [agent.email], raw);
  const response = await fetch(`${app.baseUrl}/api/v1/agent/email/1?markAsRead=false`, {
    headers: { authorization: `Bearer ${agent.apiKey}`, 'user-agent': 'agentpost-tests/1.0' },
  });
  t.equal(response.status, 200);
  t.match(response.headers.get('content-type'), /^application\/json; charset=utf-8/);
  t.equal(response.headers.get('transfer-encoding'), 'chunked', 'sent in pieces, with no Content-Length');
  const text = await response.text();
  const body = JSON.parse(text);
  t.equal(body.html.replace(/\r\n/g, '\n').trim(), html.trim(), 'the html as received');
  t.equal(text, JSON.stringify(body), "byte for byte JSON.stringify's text of what it holds");
  const small = await app.api('GET', '/api/v1/agent/inbox', { key: agent.apiKey });
  t.equal(small.status, 200, 'a small answer still goes in one piece');
});
