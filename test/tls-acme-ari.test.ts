import { X509Certificate } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import t, { type Test } from 'tap';
import { ManualClock } from '../src/core/clock.js';
import { startAcmeApp, storedCertificate } from './helpers/acme.js';
import { httpsText, pebbleOrSkip, type Pebble } from './helpers/pebble.js';

/**
 * ARI (RFC 9773): the CA's renewal information decides when to renew. Pebble 2.4 (Debian
 * bookworm's) has none, so a server in front of it hands on pebble's directory with a
 * `renewalInfo` added and answers for it with the window the test sets; every other request
 * goes to pebble itself (the directory's other URLs are pebble's).
 */

const HOUR = 60 * 60 * 1000;

const renewalInfoFront = async (t: Test, pebble: Pebble) => {
  const ca = readFileSync(pebble.caFile, 'utf8');
  const state = { window: { start: new Date(), end: new Date() }, asked: [] as string[] };
  const server = createServer({ cert: pebble.listener.cert, key: pebble.listener.key }, (request, response) => {
    const url = request.url ?? '';
    if (url === '/dir') {
      void httpsText(pebble.directoryUrl, ca).then((text) => {
        const port = (server.address() as AddressInfo).port;
        response.setHeader('content-type', 'application/json');
        response.end(JSON.stringify({ ...JSON.parse(text), renewalInfo: `https://localhost:${port}/renewal-info` }));
      });
      return;
    }
    const id = /^\/renewal-info\/([\w-]+\.[\w-]+)$/.exec(url)?.[1];
    if (!id) return void response.writeHead(404).end();
    state.asked.push(id);
    response.setHeader('content-type', 'application/json');
    response.setHeader('retry-after', '60');
    response.end(JSON.stringify({ suggestedWindow: { start: state.window.start.toISOString(), end: state.window.end.toISOString() } }));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => new Promise<void>((resolve) => server.close(() => resolve())));
  return { directoryUrl: `https://localhost:${(server.address() as AddressInfo).port}/dir`, state };
};

t.test("the CA's renewal window decides: a time inside it, and a window moved to the past renews at the next check", async (t) => {
  const pebble = await pebbleOrSkip(t);
  if (!pebble) return;
  const front = await renewalInfoFront(t, pebble);
  const clock = new ManualClock(new Date());
  front.state.window = { start: new Date(clock.now().getTime() + 40 * 24 * HOUR), end: new Date(clock.now().getTime() + 41 * 24 * HOUR) };
  const app = await startAcmeApp(t, pebble, { tls: { acme: { directoryUrl: front.directoryUrl } } }, { clock });
  const acme = app.app.acme;
  if (!acme) throw new Error('no ACME renewal');
  await acme.idle();
  const first = storedCertificate(app);
  t.equal(front.state.asked.length, 1, 'asked once, right after the certificate came');
  const [keyId, serial] = front.state.asked[0].split('.');
  t.ok(keyId.length > 0, 'the Authority Key Identifier');
  const certificateSerial = BigInt(`0x${new X509Certificate(readFileSync(`${app.app.config.dataDir}/acme/certificate.pem`)).serialNumber}`);
  t.equal(BigInt(`0x${Buffer.from(serial, 'base64url').toString('hex')}`), certificateSerial, 'and the serial number (RFC 9773 section 4.1)');
  const renewAt = Date.parse(acme.status().renewAt ?? '');
  t.ok(
    renewAt >= front.state.window.start.getTime() && renewAt <= front.state.window.end.getTime(),
    'the renewal is planned inside the window, not 30 days before expiry',
  );

  await acme.check();
  t.equal(front.state.asked.length, 1, 'not asked again before its Retry-After');
  t.equal(storedCertificate(app).fingerprint, first.fingerprint);

  front.state.window = { start: new Date(clock.now().getTime() - 2 * HOUR), end: new Date(clock.now().getTime() - HOUR) };
  clock.advance(61_000);
  await acme.check();
  t.not(storedCertificate(app).fingerprint, first.fingerprint, 'a window in the past: renewed at once');
  t.equal(front.state.asked.length, 3, 'asked about the old certificate, then about the new one');
  t.not(front.state.asked[2], front.state.asked[0]);
});
