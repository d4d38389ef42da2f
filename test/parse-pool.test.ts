// The inbound parse runs on worker threads (src/workers/parse-pool.ts). What a thread returns
// must be exactly what parseMessage returns on the main thread; a thread that dies fails only
// its own messages (the MX answers 451, nothing is stored) and is replaced.
import { Worker } from 'node:worker_threads';
import { dyingWorker } from './helpers/workers.js';
import t from 'tap';
import { loadConfig } from '../src/config/load.js';
import { isAppError } from '../src/core/errors.js';
import { createLogger } from '../src/core/logger.js';
import { parseMessage } from '../src/mime/parse.js';
import { LARGE_PARSE_BYTES, ParsePool, type ParseWorkerFactory } from '../src/workers/parse-pool.js';
import { sourceParseWorker } from '../src/workers/parse-worker-source.js';
import { startApp } from './helpers/app.js';
import { emlFixtures, fixture } from './helpers/mail.js';
import { smtpSendRaw } from './helpers/smtp.js';

const FIXTURES = emlFixtures();
const silent = createLogger('silent', () => {});

/** The first thread it starts dies on its first message; every later one is the real parser. */
const firstThreadDies = (): { factory: ParseWorkerFactory; started: () => number } => {
  let count = 0;
  return { factory: () => (count++ === 0 ? dyingWorker() : sourceParseWorker()), started: () => count };
};

const rejectionOf = async (promise: Promise<unknown>): Promise<any> => {
  try {
    await promise;
  } catch (error) {
    return error;
  }
  throw new Error('expected a rejection');
};

t.test('a packed text crosses back from a thread as its own bytes, not its zlib chunk (64 KB on Node 24)', async (t) => {
  const pool = new ParsePool(1, sourceParseWorker, silent, { timeoutMs: 60_000 });
  t.teardown(() => pool.close());
  await pool.start();
  const words = Array.from({ length: 700 }, (_, i) => `word${i % 113}`).join(' ');
  const html = `<p>${words}</p>`;
  const raw = Buffer.from(
    'From: a@example.org\r\nTo: b@example.org\r\nSubject: packed\r\nMIME-Version: 1.0\r\n' +
      'Content-Type: multipart/alternative; boundary=b\r\n\r\n--b\r\nContent-Type: text/plain\r\n\r\n' +
      `${words}\r\n--b\r\nContent-Type: text/html\r\n\r\n${html}\r\n--b--\r\n`,
  );
  const { packed } = (await pool.parse(raw)).body!;
  const compressed = [packed.text, packed.html].filter((value): value is Uint8Array => typeof value !== 'string');
  t.equal(compressed.length, 2, 'the text and the HTML are compressed');
  for (const value of compressed) t.equal(value.buffer.byteLength, value.byteLength, `${value.byteLength} bytes in a buffer of that size`);
});

t.test('every MIME fixture parses on a thread exactly as on the main thread', async (t) => {
  // A budget no cold parse on a loaded machine reaches: the comparison is of full parses.
  const pool = new ParsePool(2, sourceParseWorker, silent, { timeoutMs: 60_000 });
  t.teardown(() => pool.close());
  await pool.start();
  t.ok(FIXTURES.length >= 10, 'the fixtures are there');
  // All at once: two threads, replies matched to requests by id, whatever order they finish in.
  const threaded = await Promise.all(FIXTURES.map((name) => pool.parse(fixture(name))));
  for (const [index, name] of FIXTURES.entries()) {
    const expected = await parseMessage(fixture(name));
    t.strictSame(threaded[index], expected, `${name}: same fields, same types`);
  }
  const withAttachments = threaded[FIXTURES.indexOf('attachments.eml')];
  t.equal(withAttachments.attachments.length, 3, 'the attachments fixture is in the comparison');
});

t.test('the junk filter features come back only when asked for, as the main thread computes them', async (t) => {
  const pool = new ParsePool(1, sourceParseWorker, silent, { timeoutMs: 60_000 });
  t.teardown(() => pool.close());
  await pool.start();
  const raw = fixture('reply.eml');
  t.equal((await pool.parse(raw)).junkFeatures, undefined, 'a parse for a backfill or an APPEND computes none');
  const wanted = await pool.parse(raw, { junkFeatures: true });
  t.ok(wanted.junkFeatures && wanted.junkFeatures.length > 10, 'a parse for the filter has them');
  t.strictSame(wanted, await parseMessage(raw, { junkFeatures: true }), 'the same as on the main thread');
});

t.test('long texts cross once, in their packed form, and come back as the main thread parses them', async (t) => {
  const pool = new ParsePool(1, sourceParseWorker, silent, { timeoutMs: 60_000 });
  t.teardown(() => pool.close());
  await pool.start();
  const long = Array.from({ length: 9000 }, (_, i) => `line ${i} of a long text`).join('\r\n');
  const quoted = `${long}\r\n\r\nOn Mon, Bob wrote:\r\n> ${long.slice(0, 2000).replace(/\r\n/g, '\r\n> ')}\r\n`;
  const html = `<div>${long.replace(/\r\n/g, '<br>')}</div><blockquote type="cite">quoted</blockquote>`;
  const shapes = {
    'a long plain text (packed as it is; its new text is itself)': `Content-Type: text/plain\r\n\r\n${long}\r\n`,
    'a long text that quotes (its new text is shorter)': `Content-Type: text/plain\r\n\r\n${quoted}`,
    'long text and HTML': `Content-Type: multipart/alternative; boundary=b\r\n\r\n--b\r\nContent-Type: text/plain\r\n\r\n${long}\r\n--b\r\nContent-Type: text/html\r\n\r\n${html}\r\n--b--\r\n`,
  };
  for (const [shape, rest] of Object.entries(shapes)) {
    const raw = Buffer.from(`From: a@example.org\r\nTo: b@example.org\r\nSubject: long\r\nMIME-Version: 1.0\r\n${rest}`);
    const threaded = await pool.parse(raw);
    t.ok(Buffer.byteLength(threaded.text ?? '') > 64 * 1024, `${shape}: over the compression limit`);
    t.strictSame(threaded, await parseMessage(raw), `${shape}: same as on the main thread`);
  }
});

t.test('a thread that dies fails its request cleanly and is replaced', async (t) => {
  const threads = firstThreadDies();
  const pool = new ParsePool(1, threads.factory, silent);
  t.teardown(() => pool.close());
  await pool.start();
  const error = await rejectionOf(pool.parse(fixture('reply.eml')));
  t.match(error.message, /exited with code 7/);
  t.notOk(isAppError(error), 'not an AppError: the MX maps it to 451 4.3.0, a retry');
  const parsed = await pool.parse(fixture('reply.eml'));
  t.strictSame(parsed, await parseMessage(fixture('reply.eml')), 'the next message goes to a new thread');
  t.equal(threads.started(), 2);
});

t.test('an idle thread ends after idleMs; the next message starts a new one and parses', async (t) => {
  let started = 0;
  const exits: number[] = [];
  const factory: ParseWorkerFactory = () => {
    const worker = sourceParseWorker();
    const index = started++;
    worker.once('exit', () => exits.push(index));
    return worker;
  };
  let idleExits = 0;
  let idleExited = (): void => {};
  const pool = new ParsePool(1, factory, silent, { idleMs: 50, onIdleExit: () => (idleExits++, idleExited()) });
  t.teardown(() => pool.close());
  await pool.start();
  await new Promise<void>((resolve) => (idleExited = resolve));
  t.strictSame(exits, [0], 'the thread start() proved ended once idle');
  const parsed = await pool.parse(fixture('reply.eml'));
  t.strictSame(parsed, await parseMessage(fixture('reply.eml')), 'a new thread parses the next message');
  t.equal(started, 2);
  // Busy threads stay: many messages at once all parse on the one thread.
  const many = await Promise.all(FIXTURES.slice(0, 5).map((name) => pool.parse(fixture(name))));
  t.equal(many.length, 5);
  t.equal(started, 2, 'no thread ended while it had work');
  await new Promise<void>((resolve) => (idleExited = resolve));
  t.equal(idleExits, 2, 'and it ends again once idle');
});

t.test('start fails when a thread ends before it is ready; close fails what is in flight', async (t) => {
  const broken = new ParsePool(1, () => new Worker('process.exit(3)', { eval: true }), silent);
  t.match((await rejectionOf(broken.start())).message, /exited with code 3 before it was ready/);
  await broken.close();

  const pool = new ParsePool(1, sourceParseWorker, silent);
  await pool.start();
  const inFlight = pool.parse(fixture('alternative.eml'));
  await pool.close();
  // Either the thread answered before it was stopped, or the request failed; never left hanging.
  const outcome = await inFlight.then(
    (parsed) => parsed.subject,
    (error: Error) => error.message,
  );
  t.match(outcome, /^(Quarterly numbers|the server is shutting down)$/);
  const after = await rejectionOf(pool.parse(fixture('alternative.eml')));
  t.ok(isAppError(after) && after.code === 'unavailable', 'no parse after close');
});

t.test('the MX: a dying parse worker means 451 and nothing stored; the retry lands', async (t) => {
  const threads = firstThreadDies();
  const { smtpPort, register, api } = await startApp(t, { smtp: { parseThreads: 1 } }, { parseWorker: threads.factory });
  const agent = await register();
  const error = await rejectionOf(smtpSendRaw(smtpPort, 'a@example.org', [agent.email], fixture('reply.eml')));
  t.equal(error.responseCode, 451, 'a temporary failure: the sender keeps the message');
  t.match(error.response, /^451 4\.3\.0 /);
  const empty = await api('GET', '/api/v1/agent/inbox', { key: agent.apiKey });
  t.equal(empty.body.totalMessages, 0);
  const retry = await smtpSendRaw(smtpPort, 'a@example.org', [agent.email], fixture('reply.eml'));
  t.match(retry.response, /^250 /);
  const inbox = await api('GET', '/api/v1/agent/inbox', { key: agent.apiKey });
  t.same(
    inbox.body.emails.map((email: any) => email.subject),
    ['Re: Quarterly numbers'],
  );
  t.equal(threads.started(), 2);
});

t.test('the app does not start when its parse worker cannot', async (t) => {
  const broken: ParseWorkerFactory = () => new Worker('process.exit(3)', { eval: true });
  await t.rejects(startApp(t, { smtp: { parseThreads: 1 } }, { parseWorker: broken }), /exited with code 3 before it was ready/);
});

t.test('smtp.parseThreads and parseTimeoutMs: defaults, env, flags, bounds (every parse is on a thread)', async (t) => {
  t.equal(loadConfig().smtp.parseThreads, 1);
  t.equal(loadConfig().smtp.parseTimeoutMs, 2000);
  t.equal(loadConfig({ env: { AGENTPOST_PARSE_THREADS: '3' } }).smtp.parseThreads, 3);
  t.equal(loadConfig({ env: { AGENTPOST_PARSE_TIMEOUT_MS: '500' } }).smtp.parseTimeoutMs, 500);
  t.equal(loadConfig({ flags: { 'parse-threads': '2' } }).smtp.parseThreads, 2);
  t.throws(() => loadConfig({ flags: { 'parse-threads': '0' } }), /smtp\.parseThreads/);
  t.throws(() => loadConfig({ env: { AGENTPOST_PARSE_THREADS: '-1' } }), /smtp\.parseThreads/);
  t.throws(() => loadConfig({ overrides: { smtp: { parseThreads: 65 } } }), /smtp\.parseThreads/);
});

t.test('a large message is parsed on a worker of its own: small mail is never queued behind it', async (t) => {
  let started = 0;
  // The pool's own worker is the real parser; the second one started, the worker for large mail, never answers.
  const factory: ParseWorkerFactory = () =>
    started++ === 1
      ? new Worker(
          `const { parentPort } = require('node:worker_threads');
   parentPort.postMessage({ type: 'ready' });
   parentPort.on('message', () => {});`,
          { eval: true },
        )
      : sourceParseWorker();
  const pool = new ParsePool(1, factory, silent, { timeoutMs: 60_000 });
  t.teardown(() => pool.close());
  await pool.start();
  const large = Buffer.from(`Subject: large\r\n\r\n${'x'.repeat(78)}\r\n`.repeat(1) + `${'y'.repeat(76)}\r\n`.repeat(14_000));
  t.ok(large.length >= LARGE_PARSE_BYTES, `${large.length} bytes`);
  let largeDone = false;
  void pool.parse(large).then(
    () => (largeDone = true),
    () => (largeDone = true),
  );
  const small = await pool.parse(Buffer.from('Subject: small\r\n\r\nhello\r\n'));
  t.equal(small.subject, 'small', 'the small message is parsed meanwhile');
  t.notOk(largeDone, 'while the large one is still on its own worker');
  t.equal(started, 2, 'the worker for large mail started with the large message');
});
