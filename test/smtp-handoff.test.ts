import { generateKeyPairSync } from 'node:crypto';
import * as net from 'node:net';
import t from 'tap';
import type { Route } from '../src/core/outbound.js';
import { SmtpHandoff } from '../src/smtp/outbound.js';
import { verifyDkim } from './helpers/dkim.js';
import { startSink } from './helpers/sink.js';

const RAW = Buffer.from('From: a@agents.localhost\r\nTo: x@remote.test\r\nSubject: hi\r\nMessage-ID: <1@agents.localhost>\r\n\r\nhello\r\n');
const route = (port: number, hosts = ['127.0.0.1']): Route => ({
  kind: 'mx',
  hosts: hosts.map((host) => ({ host, servername: 'mx.remote.test' })),
  port,
  secure: false,
  key: `mx:remote.test:${port}`,
});
const handoff = (t: any, maxIdlePerHost = 0) => {
  const h = new SmtpHandoff({ heloName: 'agents.localhost', timeoutMs: 5000, maxIdlePerHost, idleMs: 10_000 });
  t.teardown(() => h.close());
  return h;
};

t.test('250, 451, 550 5.1.1 and 554 per recipient in one transaction', async (t) => {
  const sink = await startSink(t);
  const results = await handoff(t).deliver({
    route: route(sink.port),
    from: 'bounces+1-0123456789abcdef@agents.localhost',
    recipients: ['ok@remote.test', 'defer@remote.test', 'unknown@remote.test', 'policy@remote.test'],
    raw: RAW,
  });
  t.match(results, [
    { recipient: 'ok@remote.test', status: 'delivered', smtpCode: 250, enhancedCode: '2.0.0' },
    { recipient: 'defer@remote.test', status: 'deferred', smtpCode: 451, enhancedCode: '4.2.0' },
    { recipient: 'unknown@remote.test', status: 'failed', smtpCode: 550, enhancedCode: '5.1.1', diagnostic: /no such user/ },
    { recipient: 'policy@remote.test', status: 'failed', smtpCode: 554, enhancedCode: '5.7.1' },
  ]);
  t.equal(sink.messages.length, 1);
  t.same(sink.messages[0].to, ['ok@remote.test']);
  t.equal(sink.messages[0].from, 'bounces+1-0123456789abcdef@agents.localhost');
  t.equal(sink.messages[0].raw.toString(), RAW.toString());
});

t.test('every recipient refused: each keeps its own answer', async (t) => {
  const sink = await startSink(t);
  const results = await handoff(t).deliver({
    route: route(sink.port),
    from: 'b@agents.localhost',
    recipients: ['defer1@remote.test', 'unknown1@remote.test'],
    raw: RAW,
  });
  t.match(results, [
    { status: 'deferred', smtpCode: 451 },
    { status: 'failed', smtpCode: 550, enhancedCode: '5.1.1' },
  ]);
});

t.test('connection lost after DATA: unresolved; refused connection: deferred after every host', async (t) => {
  const sink = await startSink(t);
  const lost = await handoff(t).deliver({
    route: route(sink.port),
    from: 'b@agents.localhost',
    recipients: ['drop@remote.test', 'unknown2@remote.test'],
    raw: RAW,
  });
  t.match(lost, [
    { recipient: 'drop@remote.test', status: 'unresolved' },
    { recipient: 'unknown2@remote.test', status: 'failed', smtpCode: 550 },
  ]);
  const closed = await startSink(null);
  await closed.close();
  const refused = await handoff(t).deliver({
    route: route(closed.port, ['127.0.0.1', '127.0.0.2']),
    from: 'b@agents.localhost',
    recipients: ['ok@remote.test'],
    raw: RAW,
  });
  t.match(refused, [{ recipient: 'ok@remote.test', status: 'deferred', smtpCode: undefined, diagnostic: /ECONNREFUSED|ECONNECTION/ }]);
});

t.test('a timeout waiting for the answer after the content is unresolved; a silent server before it defers', async (t) => {
  const sink = await startSink(t);
  const quick = new SmtpHandoff({ heloName: 'agents.localhost', timeoutMs: 300, maxIdlePerHost: 0, idleMs: 1000 });
  t.teardown(() => quick.close());
  const hung = await quick.deliver({ route: route(sink.port), from: 'b@agents.localhost', recipients: ['hang@remote.test'], raw: RAW });
  t.match(hung, [{ recipient: 'hang@remote.test', status: 'unresolved', diagnostic: /ETIMEDOUT|Timeout/i }]);
  const silent = net.createServer(() => {});
  await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', () => resolve()));
  t.teardown(() => silent.close());
  const port = (silent.address() as net.AddressInfo).port;
  const noGreeting = await quick.deliver({ route: route(port), from: 'b@agents.localhost', recipients: ['ok@remote.test'], raw: RAW });
  t.match(noGreeting, [{ recipient: 'ok@remote.test', status: 'deferred' }]);
});

t.test('the next MX host is tried when the first refuses the connection', async (t) => {
  const sink = await startSink(t);
  const results = await handoff(t).deliver({
    route: route(sink.port, ['127.0.0.3', '127.0.0.1']),
    from: 'b@agents.localhost',
    recipients: ['ok@remote.test'],
    raw: RAW,
  });
  t.match(results, [{ status: 'delivered' }]);
});

t.test('idle sessions are reused per server', async (t) => {
  const sink = await startSink(t);
  const h = handoff(t, 2);
  for (let i = 0; i < 3; i += 1) {
    const results = await h.deliver({ route: route(sink.port), from: 'b@agents.localhost', recipients: [`ok${i}@remote.test`], raw: RAW });
    t.equal(results[0].status, 'delivered');
  }
  t.equal(sink.messages.length, 3);
  t.equal(sink.connections, 1, 'one TCP connection for three messages');
});

t.test("sessions turn off Nagle's algorithm, so the message's last line is not held for the server's delayed ACK", async (t) => {
  const sink = await startSink(t);
  const toSink: boolean[] = [];
  const setNoDelay = net.Socket.prototype.setNoDelay;
  net.Socket.prototype.setNoDelay = function (this: net.Socket, noDelay?: boolean) {
    if (this.remotePort === sink.port) toSink.push(noDelay ?? true);
    return setNoDelay.call(this, noDelay);
  };
  t.teardown(() => {
    net.Socket.prototype.setNoDelay = setNoDelay;
  });
  const results = await handoff(t, 1).deliver({ route: route(sink.port), from: 'b@agents.localhost', recipients: ['ok@remote.test'], raw: RAW });
  t.match(results, [{ status: 'delivered' }]);
  t.ok(toSink.length > 0 && toSink.every(Boolean), 'the client socket of the session has TCP_NODELAY (nodemailer sets it)');
});

t.test('DKIM: the signature verifies against the public key (RFC 6376, relaxed/relaxed)', async (t) => {
  const sink = await startSink(t);
  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const pem = privateKey.export({ type: 'pkcs8', format: 'pem' }).toString();
  await handoff(t).deliver({
    route: route(sink.port),
    from: 'b@agents.localhost',
    recipients: ['ok@remote.test'],
    raw: RAW,
    dkim: { domain: 'agents.localhost', selector: 'agentpost', privateKeyPem: pem },
  });
  const received = sink.messages[0].raw.toString();
  t.match(received, /^DKIM-Signature: v=1; a=rsa-sha256; c=relaxed\/relaxed; d=agents\.localhost;\s+q=dns\/txt;\s+s=agentpost;/);
  t.ok(verifyDkim(received, publicKey), 'signature verifies');
  t.notOk(verifyDkim(received.replace('Subject: hi', 'Subject: ho'), publicKey), 'a changed header breaks it');
});
