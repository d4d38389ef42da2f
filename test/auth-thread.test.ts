// The authentication thread: inbound mail is judged off the main event loop, a thread that
// dies fails only the messages it held (the sender gets 451 and retries), and with an
// injected resolver the checks run on the main thread.
import { Worker } from 'node:worker_threads';
import t from 'tap';
import type { DnsResolver } from '../src/core/dns.js';
import { createLogger } from '../src/core/logger.js';
import { AuthThread, type AuthWorkerFactory } from '../src/workers/threads/auth-thread-client.js';
import { sourceAuthWorker } from '../src/workers/threads/auth-thread-source.js';
import { startApp } from './helpers/app.js';
import { startDnsServer } from './helpers/dns-server.js';
import { smtpSend } from './helpers/smtp.js';

const silent = createLogger('silent', () => {});
const message = Buffer.from('From: a@sender.test\r\nTo: b@here.test\r\nSubject: hi\r\n\r\nbody\r\n');
const envelope = { clientAddress: '127.0.0.1', helo: 'client.test', mailFrom: 'a@sender.test' };

/** A thread that says it is ready and then ends the process at the first batch of checks. */
const dyingWorker: AuthWorkerFactory = () =>
  new Worker(
    `const { parentPort } = require('node:worker_threads');
   parentPort.postMessage({ type: 'ready' });
   parentPort.on('message', () => process.exit(7));`,
    { eval: true },
  );

t.test("the thread judges with its own resolver on dns.servers, at the main thread's time", async (t) => {
  const dns = await startDnsServer(t, { 'sender.test': { TXT: ['v=spf1 ip4:127.0.0.1 -all'] }, '_dmarc.sender.test': { TXT: ['v=DMARC1; p=reject'] } });
  const thread = new AuthThread(
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
  const factory: AuthWorkerFactory = (data) => ((started += 1) === 1 ? dyingWorker(data) : sourceAuthWorker(data));
  const dns = await startDnsServer(t);
  const thread = new AuthThread(factory, { dns: { servers: dns.servers, timeoutMs: 500, tries: 1 }, hostname: 'mx.here.test', timeoutMs: 2000 }, silent);
  t.teardown(() => thread.close());
  await thread.start();
  await t.rejects(thread.check(message, envelope, new Date()), /auth thread exited with code 7/);
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
