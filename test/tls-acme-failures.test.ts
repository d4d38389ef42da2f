import { join } from 'node:path';
import t from 'tap';
import { loadConfig } from '../src/config/load.js';
import { systemClock } from '../src/core/clock.js';
import { createAcmeChallengeListener } from '../src/http/acme-challenge.js';
import { createAcme, defaultAcmeNames } from '../src/tls/acme.js';
import { CertificateStore } from '../src/tls/certificate-store.js';
import { renewalTime } from '../src/tls/acme-renewal-time.js';
import { ACME_HOST, peerFingerprint, startAcmeApp, storedCertificate } from './helpers/acme.js';
import { hostedHolder } from './helpers/domains.js';
import { pebbleOrSkip } from './helpers/pebble.js';
import { freePort } from './helpers/ports.js';
import { smtpDialog } from './helpers/smtp.js';
import { recordingLogger, smtpStartTls, tlsOpen } from './helpers/tls.js';

/** Certificates by ACME when the CA is not there, after a restart, and for which names. */

const TOKEN = 'metrics-token-0123456789';

const metricsOf = async (baseUrl: string): Promise<string> => (await fetch(`${baseUrl}/metrics`, { headers: { authorization: `Bearer ${TOKEN}` } })).text();

t.test(
  'a restart reuses the stored certificate without asking pebble; with the directory gone, a renewal fails, the old certificate keeps serving, and status, doctor and /metrics say why',
  async (t) => {
    const pebble = await pebbleOrSkip(t);
    if (!pebble) return;
    const dataDir = join(t.testdir({}), 'data');
    const first = await startAcmeApp(t, pebble, { dataDir, metrics: { token: TOKEN } });
    await first.app.acme?.idle();
    const issued = storedCertificate(first);
    await first.app.stop();

    const requests = pebble.log.length;
    const app = await startAcmeApp(t, pebble, { dataDir, metrics: { token: TOKEN } });
    await app.app.acme?.idle();
    t.equal(pebble.log.length, requests, 'pebble was asked nothing');
    const tls = { servername: ACME_HOST, ca: [await pebble.root()] };
    t.equal(peerFingerprint((await smtpStartTls(app.smtpPort, tls)).socket), issued.fingerprint, 'the stored certificate serves at once');

    await pebble.stop();
    await app.app.acme?.renew();
    t.equal(storedCertificate(app).fingerprint, issued.fingerprint);
    t.equal(peerFingerprint(await tlsOpen(app.app.ports.submissionTls as number, tls)), issued.fingerprint, 'the old certificate keeps serving');
    const certificate = (await app.api('GET', '/api/v1/status')).body.parts.certificate;
    t.match(certificate, {
      status: 'degraded',
      expiresAt: issued.notAfter.toISOString(),
      detail: /renewal by ACME failing; 1 attempt failed, .*ECONNREFUSED.*; the current certificate keeps serving/,
      acme: { failures: 1, lastError: /ECONNREFUSED/, retryAt: String, lastIssuedAt: String },
    });
    const doctor = await app.app.services.doctor.run({ domains: ['acme.test'] });
    t.match(
      doctor.checks.find((check) => check.check === 'acme'),
      { status: 'warn', detail: /1 attempt failed, .*ECONNREFUSED/, fix: /port 80 of mail\.acme\.test/ },
    );
    t.match(
      doctor.checks.find((check) => check.check === 'certificate'),
      { status: 'ok', subject: ACME_HOST },
    );
    const metrics = await metricsOf(app.baseUrl);
    t.match(metrics, `agentpost_acme_failures{directory="${pebble.directoryUrl}"} 1`);
    t.match(metrics, /agentpost_acme_last_failure_timestamp_seconds\{directory="[^"]+"\} \d+/);
  },
);

t.test('a certificate from another directory (staging, before the switch to production) is replaced at start', async (t) => {
  const staging = await pebbleOrSkip(t);
  if (!staging) return;
  const production = await pebbleOrSkip(t, { dns: staging.dns });
  if (!production) return;
  const dataDir = join(t.testdir({}), 'data');
  const first = await startAcmeApp(t, staging, { dataDir });
  await first.app.acme?.idle();
  const fromStaging = storedCertificate(first);
  await first.app.stop();
  const app = await startAcmeApp(t, production, { dataDir });
  await app.app.acme?.idle();
  const tls = { servername: ACME_HOST, ca: [await production.root()] };
  const served = peerFingerprint((await smtpStartTls(app.smtpPort, tls)).socket);
  t.not(served, fromStaging.fingerprint, 'a new certificate');
  t.equal(served, storedCertificate(app).fingerprint, "the production CA's, trusted through its root");
});

t.test(
  'a first start with the directory unreachable: listeners run without TLS, implicit-TLS handshakes fail, and status, doctor and /metrics say why',
  async (t) => {
    const pebble = await pebbleOrSkip(t);
    if (!pebble) return;
    const directoryUrl = `https://localhost:${await freePort()}/dir`;
    const log = recordingLogger();
    const app = await startAcmeApp(t, pebble, { metrics: { token: TOKEN }, tls: { acme: { directoryUrl } } }, { logger: log.logger, tlsPollMs: 10 });
    await app.app.acme?.idle();
    t.notMatch((await smtpDialog(app.smtpPort, ['EHLO client.test']))[1], /STARTTLS/, 'the MX offers no STARTTLS without a certificate');
    t.notMatch((await smtpDialog(app.submissionPort, ['EHLO client.test']))[1], /STARTTLS/);
    await t.rejects(tlsOpen(app.app.ports.submissionTls as number, { servername: ACME_HOST, rejectUnauthorized: false }), 'no certificate to present');
    await t.rejects(tlsOpen(app.app.ports.imapTls as number, { rejectUnauthorized: false }));
    const agent = await app.register();
    t.match(agent.email, /@/, 'the rest of the service works');
    const status = (await app.api('GET', '/api/v1/status')).body;
    t.match(status.parts.certificate, {
      status: 'degraded',
      configured: true,
      detail: new RegExp(`no certificate yet from ${directoryUrl.replaceAll('/', '\\/')}: listeners offer no TLS; 1 attempt failed, .*ECONNREFUSED`),
      acme: { failures: 1, names: [ACME_HOST], lastIssuedAt: null },
    });
    t.equal(status.parts.listeners.status, 'ok', 'every listener listens');
    const doctor = await app.app.services.doctor.run({ domains: ['acme.test'] });
    t.match(
      doctor.checks.find((check) => check.check === 'acme'),
      { status: 'fail', detail: /ECONNREFUSED/ },
    );
    t.notOk(
      doctor.checks.some((check) => check.check === 'certificate'),
      'no "set tls.cert" advice: the acme line explains',
    );
    t.match(await metricsOf(app.baseUrl), `agentpost_acme_failures{directory="${directoryUrl}"} 1`);
    t.match(
      log.entries.find((entry) => entry.level === 'error'),
      { message: 'ACME certificate request failed: no listener offers TLS until one comes', fields: { error: /ECONNREFUSED/, retryAt: String } },
      'the log says why',
    );
    t.notOk(
      log.entries.some((entry) => /refused/.test(entry.message)),
      'the file poll (every 10 ms meanwhile) does not report the missing certificate as refused',
    );
    const pauses: number[] = [];
    for (let attempt = 0; attempt < 3; attempt += 1) {
      const { retryAt, lastErrorAt } = app.app.acme?.status() ?? {};
      pauses.push((Date.parse(retryAt ?? '') - Date.parse(lastErrorAt ?? '')) / 60_000);
      await app.app.acme?.renew();
    }
    t.same(pauses, [1, 2, 4], 'the pause after each failure doubles, in minutes');
  },
);

t.test(
  'the policy host of a verified domain that points here joins the certificate at the next check, one that does not is left out; the HTTP listener answers the challenge on its own port',
  async (t) => {
    const pebble = await pebbleOrSkip(t);
    if (!pebble) return;
    const app = await startAcmeApp(t, pebble, { http: { port: pebble.httpPort } });
    await app.app.acme?.idle();
    t.equal(app.app.ports.acmeHttp, null, 'no listener of its own: tls.acme.httpPort is http.port');
    t.same(storedCertificate(app).names, [ACME_HOST]);
    // team.acme.test publishes every record (mta-sts.team.acme.test is a CNAME to the MX host);
    // solo.acme.test leaves out its policy host, which the CA could not reach here.
    await hostedHolder(app, pebble.dns, 'team.acme.test');
    const solo = await hostedHolder(app, pebble.dns, 'solo.acme.test');
    const soloHost = solo.domain.records.find((record) => record.name === 'mta-sts.solo.acme.test');
    t.equal(soloHost?.type, 'CNAME');
    pebble.dns.remove('mta-sts.solo.acme.test');
    await app.api('POST', `/api/user/domains/${solo.domain.id}/verify`, { key: solo.key });
    await app.app.acme?.check();
    t.same(storedCertificate(app).names, [ACME_HOST, 'mta-sts.team.acme.test'], 'the policy host that points here, not the other');
    const issuedBefore = storedCertificate(app).fingerprint;
    await app.app.acme?.check();
    t.equal(storedCertificate(app).fingerprint, issuedBefore, 'nothing due: no new certificate');
  },
);

t.test('a check that throws (the names cannot be read) is logged, and the next check runs', async (t) => {
  const pebble = await pebbleOrSkip(t);
  if (!pebble) return;
  pebble.dns.set(ACME_HOST, { A: ['127.0.0.1'] });
  const acmeSettings = { directoryUrl: pebble.directoryUrl, caFile: pebble.caFile, httpPort: pebble.httpPort };
  const config = loadConfig({ overrides: { dataDir: t.testdir({}), smtp: { hostname: ACME_HOST }, tls: { acme: acmeSettings } } });
  const log = recordingLogger();
  const certificates = CertificateStore.fromConfig(config, log.logger, systemClock);
  let reads = 0;
  const policyHosts = async () => {
    reads += 1;
    if (reads === 1) throw new Error('the database is closed');
    return [];
  };
  const acme = createAcme(config, certificates, { logger: log.logger, clock: systemClock, policyHosts, pollMs: 50 });
  if (!acme || !certificates) throw new Error('no ACME');
  const listener = createAcmeChallengeListener(acme.challenges);
  await new Promise<void>((resolve) => listener.listen(pebble.httpPort, '127.0.0.1', resolve));
  t.teardown(() => {
    acme.renewal.stop();
    listener.close();
  });
  acme.renewal.start();
  await acme.renewal.idle();
  t.match(
    log.entries.find((entry) => entry.level === 'error'),
    { message: /^ACME check failed/, fields: { error: 'the database is closed' } },
  );
  t.notOk(certificates.available());
  await acme.renewal.check();
  t.ok(certificates.available(), 'the next check got the certificate');
});

t.test('the default names leave out what no CA certifies; renewal 30 days before expiry, a third of a short lifetime', async (t) => {
  t.same(defaultAcmeNames(loadConfig(), []), [], 'localhost and a derived base URL are left out');
  const config = loadConfig({ overrides: { smtp: { hostname: 'MX.Example.org.' }, baseUrl: 'https://app.example.org:8443/mail' } });
  t.same(defaultAcmeNames(config, ['mta-sts.team.example', 'mta-sts.example.org']), [
    'mx.example.org',
    'app.example.org',
    'mta-sts.team.example',
    'mta-sts.example.org',
  ]);
  t.same(defaultAcmeNames(loadConfig({ overrides: { baseUrl: 'http://127.0.0.1:8080' } }), []), []);
  const day = 24 * 60 * 60 * 1000;
  const validFrom = new Date('2026-01-01T00:00:00Z');
  const info = (days: number) => ({ source: 'x', subject: '', names: [], validFrom, validTo: new Date(validFrom.getTime() + days * day) });
  t.equal(renewalTime(info(90)), validFrom.getTime() + 60 * day, '90 days: 30 days before expiry');
  t.equal(renewalTime(info(6)), validFrom.getTime() + 4 * day, '6 days: 2 days before expiry');
});
