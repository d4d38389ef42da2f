import { statSync } from 'node:fs';
import { join } from 'node:path';
import type { TLSSocket } from 'node:tls';
import t from 'tap';
import { ACME_HOST, httpsGet, imapStartTls, peerFingerprint, smtpCommand, startAcmeApp, storedCertificate } from './helpers/acme.js';
import { rawImap } from './helpers/imap.js';
import { assertMatchesOpenApi } from './helpers/openapi.js';
import { pebbleOrSkip } from './helpers/pebble.js';
import { recordingLogger, smtpStartTls, tlsOpen } from './helpers/tls.js';

/** Certificates by ACME from pebble (RFC 8555): what every listener serves, and renewals. */

const WEB = 'www.acme.test';
const TOKEN = 'metrics-token-0123456789';

t.test(
  'the certificate pebble issued is served on STARTTLS, implicit TLS and HTTPS; a forced renewal reaches new connections while older ones keep working',
  async (t) => {
    const pebble = await pebbleOrSkip(t);
    if (!pebble) return;
    pebble.dns.set(WEB, { A: ['127.0.0.1'] });
    const app = await startAcmeApp(t, pebble, { baseUrl: `https://${WEB}`, http: { tls: true }, metrics: { token: TOKEN } });
    const acme = app.app.acme;
    if (!acme) throw new Error('no ACME renewal');
    await acme.idle();
    const issued = storedCertificate(app);
    t.same(issued.names, [ACME_HOST, WEB], 'smtp.hostname and the host of baseUrl');
    const tls = { servername: ACME_HOST, ca: [await pebble.root()] };
    const { ports } = app.app;

    // Each handshake verifies the chain up to pebble's root and the name (rejectUnauthorized).
    const mx = (await smtpStartTls(ports.smtp, tls)).socket;
    const served = {
      mx: peerFingerprint(mx),
      submission: peerFingerprint((await smtpStartTls(ports.submission, tls)).socket),
      submissionTls: peerFingerprint(await tlsOpen(ports.submissionTls as number, tls)),
      imap: peerFingerprint(await imapStartTls(t, ports.imap, tls)),
      imapTls: peerFingerprint(await tlsOpen(ports.imapTls as number, tls)),
      https: (await httpsGet(ports.http, '/healthz', { ...tls, servername: WEB })).fingerprint,
    };
    for (const [listener, fingerprint] of Object.entries(served)) t.equal(fingerprint, issued.fingerprint, `${listener} serves pebble's certificate`);

    const folder = join(app.app.config.dataDir, 'acme');
    t.equal(statSync(folder).mode & 0o777, 0o700, "acme/ is the owner's only");
    for (const file of ['account.key', 'certificate.pem', 'certificate.key', 'state.json'])
      t.equal(statSync(join(folder, file)).mode & 0o777, 0o600, `${file} is 0600`);

    const status = await httpsGet(ports.http, '/api/v1/status', { ...tls, servername: WEB });
    const body = JSON.parse(status.body);
    assertMatchesOpenApi('GET', '/api/v1/status', 200, body);
    t.match(body.parts.certificate, {
      status: 'ok',
      configured: true,
      expiresAt: issued.notAfter.toISOString(),
      acme: { directoryUrl: pebble.directoryUrl, names: [ACME_HOST, WEB], failures: 0, lastError: null, lastIssuedAt: String },
    });
    const metrics = (await httpsGet(ports.http, '/metrics', { ...tls, servername: WEB }, { authorization: `Bearer ${TOKEN}` })).body;
    t.match(metrics, `agentpost_acme_failures{directory="${pebble.directoryUrl}"} 0`);
    t.match(metrics, `agentpost_certificate_expiry_timestamp_seconds{certificate="tls"} ${issued.notAfter.getTime() / 1000}`);

    // Connections opened before the renewal, in the middle of their sessions.
    const imapBefore = await rawImap(t, ports.imapTls as number, { tls });
    await acme.renew();
    const renewed = storedCertificate(app);
    t.not(renewed.fingerprint, issued.fingerprint, 'a new certificate');
    t.equal(peerFingerprint((await smtpStartTls(ports.smtp, tls)).socket), renewed.fingerprint, 'a new MX connection gets it');
    t.equal(peerFingerprint(await tlsOpen(ports.imapTls as number, tls)), renewed.fingerprint, 'a new IMAP connection gets it');
    t.equal((await httpsGet(ports.http, '/healthz', { ...tls, servername: WEB })).fingerprint, renewed.fingerprint, 'a new HTTPS connection gets it');
    t.match(await smtpCommand(mx, 'NOOP'), /^250 /, 'the MX session opened before still answers');
    t.equal(peerFingerprint(mx), issued.fingerprint, 'over the certificate it started with');
    imapBefore.send('b NOOP\r\n');
    t.match(await imapBefore.read(/^b /m), /^b OK/m, 'the IMAP session opened before still answers');
    mx.end();
  },
);

t.test('a short-lived certificate is renewed by itself a third of its lifetime before expiry', async (t) => {
  const pebble = await pebbleOrSkip(t, { validitySeconds: 12 });
  if (!pebble) return;
  const log = recordingLogger();
  const firstIssued = log.next(/^tls certificate issued by ACME$/);
  const app = await startAcmeApp(t, pebble, {}, { logger: log.logger });
  const first = await firstIssued;
  const tls = { servername: ACME_HOST, ca: [await pebble.root()] };
  const before = await rawImap(t, app.app.ports.imapTls as number, { tls });
  t.equal(peerFingerprint(before.socket as TLSSocket), first.fields.fingerprint);
  const second = await log.next(/^tls certificate issued by ACME$/);
  t.not(second.fields.fingerprint, first.fields.fingerprint, 'a new certificate came without being asked for');
  const renewAt = Date.parse(first.fields.renewAt as string);
  const notAfter = Date.parse(first.fields.notAfter as string);
  t.ok(renewAt < notAfter && notAfter - renewAt <= 4000, `renewal planned for ${first.fields.renewAt}, a third of 12 s before ${first.fields.notAfter}`);
  t.equal(peerFingerprint(await tlsOpen(app.app.ports.imapTls as number, tls)), second.fields.fingerprint, 'a connection opened after it gets the new one');
  before.send('a NOOP\r\n');
  t.match(await before.read(/^a /m), /^a OK/m, 'the connection opened before keeps working');
});
