// The authentication worker: inbound mail is judged off the main event loop, a thread that
// dies fails only the messages it held (the sender gets 451 and retries), and with an
// injected resolver the checks run on the main thread.
import { stat } from 'node:fs/promises';
import { Worker } from 'node:worker_threads';
import { dyingWorker } from './helpers/workers.js';
import t from 'tap';
import type { DnsResolver } from '../src/core/dns.js';
import { createLogger } from '../src/core/logger.js';
import { BEAT, RUNNING } from '../src/workers/auth-protocol.js';
import { AuthenticationWorker, type AuthWorkerFactory } from '../src/workers/auth-client.js';
import { trackRunningChecks } from '../src/workers/running-check.js';
import { sourceAuthWorker } from '../src/workers/auth-worker-source.js';
import { startApp } from './helpers/app.js';
import { startDnsServer } from './helpers/dns-server.js';
import { smtpSend } from './helpers/smtp.js';

const silent = createLogger('silent', () => {});
const message = Buffer.from('From: a@sender.test\r\nTo: b@here.test\r\nSubject: hi\r\n\r\nbody\r\n');
const envelope = { clientAddress: '127.0.0.1', helo: 'client.test', mailFrom: 'a@sender.test' };

/**
 * A thread that speaks the protocol and beats like the real one (running-check.ts), judging
 * every message "unverified" after 20 ms, except: mail from hang@ holds its event loop for
 * good (naming that check as running), mail from silent@ is never answered (it keeps beating).
 */
const stallingWorker: AuthWorkerFactory = (data) =>
  new Worker(
    `const { parentPort, workerData } = require('node:worker_threads');
   const state = new Int32Array(workerData.state);
   setInterval(() => Atomics.add(state, ${BEAT}, 1), 20);
   const checked = { verdict: { spf: 'none', dkim: 'none', dmarc: 'none', arc: 'none', trust: 'unverified', reason: 'judged by the fake' }, field: 'Authentication-Results: fake; none\\r\\n' };
   parentPort.postMessage({ type: 'ready' });
   parentPort.on('message', (requests) => {
     for (const request of requests) {
       if (request.envelope.mailFrom === 'silent@sender.test') continue;
       if (request.envelope.mailFrom === 'hang@sender.test') {
         Atomics.store(state, ${RUNNING}, request.id);
         for (;;) {}
       }
       setTimeout(() => parentPort.postMessage({ type: 'results', results: [{ id: request.id, checked }] }), 20);
     }
   });`,
    { eval: true, workerData: data },
  );

const counted = (factory: AuthWorkerFactory): { factory: AuthWorkerFactory; started: () => number } => {
  let count = 0;
  return { factory: (data) => ((count += 1), factory(data)), started: () => count };
};

const from = (mailFrom: string) => ({ ...envelope, mailFrom });

t.test("the thread judges with its own resolver on dns.servers, at the main thread's time", async (t) => {
  const dns = await startDnsServer(t, { 'sender.test': { TXT: ['v=spf1 ip4:127.0.0.1 -all'] }, '_dmarc.sender.test': { TXT: ['v=DMARC1; p=reject'] } });
  const thread = new AuthenticationWorker(
    sourceAuthWorker,
    { dns: { servers: dns.servers, timeoutMs: 1000, tries: 1 }, hostname: 'mx.here.test', timeoutMs: 5000 },
    silent,
  );
  t.teardown(() => thread.close());
  await thread.start();
  const bytes = Buffer.from(message);
  const checked = await thread.check(message, envelope, new Date());
  t.match(checked.verdict, { spf: 'pass', dmarc: 'pass', trust: 'verified' });
  t.match(checked.field, /^Authentication-Results: mx\.here\.test;\r\n/);
  t.ok(dns.queries.includes('TXT _dmarc.sender.test'));
  t.same(message, bytes, 'the caller keeps its bytes: the thread got a copy');
});

t.test('a thread that dies fails the checks it held; the next check starts a new one', async (t) => {
  let started = 0;
  const factory: AuthWorkerFactory = (data) => ((started += 1) === 1 ? dyingWorker() : sourceAuthWorker(data));
  const dns = await startDnsServer(t);
  const thread = new AuthenticationWorker(
    factory,
    { dns: { servers: dns.servers, timeoutMs: 500, tries: 1 }, hostname: 'mx.here.test', timeoutMs: 2000 },
    silent,
  );
  t.teardown(() => thread.close());
  await thread.start();
  await t.rejects(thread.check(message, envelope, new Date()), /authentication worker exited with code 7/);
  const checked = await thread.check(message, envelope, new Date());
  t.equal(checked.verdict?.trust, 'unverified', 'the replacement answers');
  t.equal(started, 2);
});

t.test('over SMTP: a dying thread is a 451 and nothing is stored; a fake resolver keeps the checks on the main thread', async (t) => {
  const dying = await startApp(t, { smtp: { authenticationThread: true } }, { authWorker: dyingWorker });
  const agent = await dying.register();
  const refused = await smtpSend(dying.smtpPort, { from: 'a@sender.test', to: agent.email, subject: 'x', text: 'y' }).then(
    () => null,
    (error: { responseCode?: number }) => error,
  );
  t.equal(refused?.responseCode, 451, 'a transient failure: the sender retries');
  t.equal((await dying.api('GET', '/api/v1/agent/inbox', { key: agent.apiKey })).body.totalMessages, 0);

  const noRecords = (name: string) => Promise.reject(Object.assign(new Error(`ENOTFOUND ${name}`), { code: 'ENOTFOUND' }));
  const fake: DnsResolver = {
    resolveMx: noRecords,
    resolve4: noRecords,
    resolve6: noRecords,
    resolveCname: noRecords,
    resolvePtr: noRecords,
    resolveAddresses: noRecords,
    resolveTxt: async (name) => (name === 'sender.test' ? [['v=spf1 ip4:127.0.0.1 -all']] : noRecords(name)),
  };
  const faked = await startApp(t, { smtp: { authenticationThread: true } }, { dns: fake, authWorker: dyingWorker });
  const other = await faked.register();
  await smtpSend(faked.smtpPort, { from: 'a@sender.test', to: other.email, subject: 'x', text: 'y' });
  const listed = (await faked.api('GET', '/api/v1/agent/inbox', { key: other.apiKey })).body.emails[0];
  t.match(listed.authentication, { spf: 'pass', dmarc: 'none' }, 'judged on the main thread with the injected resolver');
});

t.test('a check that holds the thread is stopped: a timed-out verdict for it, a new thread for the others', async (t) => {
  const threads = counted(stallingWorker);
  const thread = new AuthenticationWorker(
    threads.factory,
    { dns: { servers: [], timeoutMs: 500, tries: 1 }, hostname: 'mx.here.test', timeoutMs: 60_000 },
    silent,
    300,
  );
  t.teardown(() => thread.close());
  await thread.start();
  // One batch: the ordinary check is in the thread, waiting behind the one that holds it.
  const ordinary = thread.check(message, from('a@sender.test'), new Date());
  const hung = thread.check(message, from('hang@sender.test'), new Date());
  const stopped = await hung;
  t.match(stopped.verdict, {
    spf: 'temperror',
    dkim: 'temperror',
    dmarc: 'temperror',
    trust: 'unverified',
    reason: /timed out: they held the authentication worker for 300 ms and were stopped/,
  });
  t.match(stopped.field, /^Authentication-Results: mx\.here\.test;\r\n\tspf=temperror \(the checks timed out/);
  t.match((await ordinary).verdict, { reason: 'judged by the fake' }, 'the other check, sent again, is answered by the new thread');
  t.equal(threads.started(), 2, 'the stuck thread was replaced');
  t.match((await thread.check(message, from('b@sender.test'), new Date())).verdict, { reason: 'judged by the fake' });
});

t.test('a check unanswered past authenticationTimeoutMs is stopped with the thread, whose other checks go on', async (t) => {
  const threads = counted(stallingWorker);
  const thread = new AuthenticationWorker(
    threads.factory,
    { dns: { servers: [], timeoutMs: 500, tries: 1 }, hostname: 'mx.here.test', timeoutMs: 200 },
    silent,
    300,
  );
  t.teardown(() => thread.close());
  await thread.start();
  const [silentOne, ordinary] = await Promise.all([
    thread.check(message, from('silent@sender.test'), new Date()),
    thread.check(message, from('a@sender.test'), new Date()),
  ]);
  t.match(silentOne.verdict, { trust: 'unverified', reason: /the checks timed out after 200 ms and were stopped/ });
  t.match(ordinary.verdict, { reason: 'judged by the fake' });
  t.match((await thread.check(message, from('b@sender.test'), new Date())).verdict, { reason: 'judged by the fake' });
  t.equal(threads.started(), 2, 'the thread that lost a check was ended; the next check started another');
});

t.test('over SMTP: a message whose checks hold the thread is stored unverified, and another sender is answered meanwhile', async (t) => {
  const app = await startApp(t, { smtp: { authenticationThread: true } }, { authWorker: stallingWorker });
  const agent = await app.register();
  const hung = smtpSend(app.smtpPort, { from: 'hang@sender.test', to: agent.email, subject: 'holds the checks', text: 'y' });
  // The thread is stuck by now; this one waits for the replacement.
  await new Promise((resolve) => setTimeout(resolve, 100));
  const other = await smtpSend(app.smtpPort, { from: 'a@sender.test', to: agent.email, subject: 'ordinary', text: 'z' });
  t.match(other.response, /^250 /);
  t.match((await hung).response, /^250 /, 'accepted, not lost');
  const emails = (await app.api('GET', '/api/v1/agent/inbox', { key: agent.apiKey })).body.emails as { subject: string }[];
  const bySubject = new Map(emails.map((email) => [email.subject, email]));
  t.match(bySubject.get('holds the checks'), { trust: 'unverified', authentication: { spf: 'temperror', dkim: 'temperror', reason: /the checks timed out/ } });
  t.match(bySubject.get('ordinary'), { authentication: { reason: 'judged by the fake' } });
});

t.test("the thread's own side: RUNNING names the check whose code runs, after every kind of wait; BEAT counts", async (t) => {
  const state = new Int32Array(new SharedArrayBuffer(8));
  const checks = trackRunningChecks(state);
  const waits: (() => Promise<unknown>)[] = [
    () => new Promise((resolve) => setTimeout(resolve, Math.random() * 5)),
    () => new Promise((resolve) => setImmediate(resolve)),
    () => new Promise((resolve) => process.nextTick(resolve)),
    () => Promise.resolve(),
    () => stat(process.cwd()),
  ];
  const seen: boolean[] = [];
  const look = (id: number) => seen.push(Atomics.load(state, RUNNING) === id);
  await Promise.all(
    Array.from({ length: 30 }, (_, index) =>
      checks.run(index + 1, async () => {
        for (const wait of waits) {
          look(index + 1);
          await wait();
          look(index + 1);
        }
      }),
    ),
  );
  t.equal(seen.length, 300);
  t.ok(
    seen.every((right) => right),
    '30 checks at once, each sees its own id whenever its code runs',
  );
  const beat = Atomics.load(state, BEAT);
  await new Promise((resolve) => setTimeout(resolve, 350));
  t.ok(Atomics.load(state, BEAT) > beat, 'the beat counts while the event loop turns');
});
