// GET /api/v1/status: each part's health (the contract's status page), and the certificate
// part against real certificates.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { generate } from 'selfsigned';
import t from 'tap';
import { ManualClock } from '../src/core/clock.js';
import { StatusService } from '../src/services/health/status.js';
import { certificateFiles } from '../src/net/certificate-files.js';
import { funded } from './helpers/agents.js';
import { startApp } from './helpers/app.js';
import { makeCertificate, writePair } from './helpers/tls.js';

t.test('a fresh service: every part ok, each listener on its port; /healthz stays the cheap probe', async (t) => {
  const app = await startApp(t);
  const status = await app.api('GET', '/api/v1/status');
  t.equal(status.status, 200);
  t.match(status.body, {
    status: 'ok',
    parts: {
      listeners: {
        status: 'ok',
        http: { listening: true, port: app.app.ports.http },
        smtp: { listening: true, port: app.smtpPort },
        submission: { listening: true, port: app.submissionPort },
        imap: { listening: true, port: app.imapPort },
      },
      store: { status: 'ok' },
      searchIndex: { status: 'ok', mode: 'thread', backlog: 0 },
      delivery: { status: 'ok', depth: 0, oldestAgeSeconds: 0, dueLagSeconds: 0 },
      webhooks: { status: 'ok', depth: 0 },
      certificate: { status: 'ok', configured: false },
    },
  });
  t.same((await app.api('GET', '/healthz')).body, { status: 'ok' });
});

t.test('the delivery queue: depth and age, degraded once due work waits past 5 minutes', async (t) => {
  const clock = new ManualClock('2026-03-01T12:00:00Z');
  const app = await startApp(t, {}, { clock });
  const sender = await funded(app, 5);
  await app.api('POST', '/api/v1/agent/send', { key: sender.apiKey, body: { to: ['a@remote.test', 'b@remote.test'], subject: 'queued', text: 'x' } });
  let delivery = (await app.api('GET', '/api/v1/status')).body.parts.delivery;
  t.match(delivery, { status: 'ok', depth: 2, oldestAgeSeconds: 0 });

  clock.advance(6 * 60 * 1000); // no worker runs in this test: the recipients stay due
  const status = (await app.api('GET', '/api/v1/status')).body;
  delivery = status.parts.delivery;
  t.match(delivery, { status: 'degraded', depth: 2, oldestAgeSeconds: 360, dueLagSeconds: 360, detail: /due 6 minutes ago/ });
  t.equal(status.status, 'degraded', 'the page is as bad as its worst part');
});

t.test('the certificate part reads the configured PEM: days left, degraded under 14 days, down when expired or unreadable', async (t) => {
  const app = await startApp(t);
  const now = new Date('2026-03-01T12:00:00Z');
  const certificate = async (days: number) =>
    (
      await generate([{ name: 'commonName', value: 'mx.example.test' }], {
        notBeforeDate: new Date(now.getTime() - 86_400_000),
        notAfterDate: new Date(now.getTime() + days * 86_400_000),
        keySize: 2048,
      })
    ).cert;
  const runtime = { listeners: () => ({}), searchMode: () => 'main' as const };
  const noBacklog = () => 0;
  const part = async (files: { source: string; pem: string }[] | Error) => {
    const service = new StatusService(
      app.app.store,
      new ManualClock(now),
      runtime,
      async () => {
        if (files instanceof Error) throw files;
        return files;
      },
      noBacklog,
    );
    return (await service.report()).parts.certificate;
  };
  t.match(await part([{ source: 'cert.pem', pem: await certificate(90) }]), { status: 'ok', configured: true, daysLeft: 90 });
  t.match(await part([{ source: 'cert.pem', pem: await certificate(10) }]), { status: 'degraded', daysLeft: 10, detail: 'cert.pem expires in 10 days' });
  t.match(
    await part([
      { source: 'cert.pem', pem: await certificate(90) },
      { source: 'other.pem', pem: await certificate(3) },
    ]),
    { status: 'degraded', daysLeft: 3 },
    'the soonest of several',
  );
  t.match(await part([{ source: 'cert.pem', pem: await certificate(-1) }]), { status: 'down', detail: 'cert.pem has expired' });
  t.match(await part([{ source: 'cert.pem', pem: 'not a certificate' }]), { status: 'down', detail: /not a PEM certificate/ });
  t.match(await part(new Error('ENOENT: no such file')), { status: 'down', detail: /cannot read the certificate: ENOENT/ });

  const dir = app.app.config.dataDir;
  writeFileSync(join(dir, 'cert.pem'), await certificate(30));
  const fromFiles = new StatusService(app.app.store, new ManualClock(now), runtime, certificateFiles([{ path: join(dir, 'cert.pem') }]), noBacklog);
  t.match((await fromFiles.report()).parts.certificate, { status: 'ok', daysLeft: 30 }, 'read from the PEM file');
  const missing = new StatusService(app.app.store, new ManualClock(now), runtime, certificateFiles([{ path: join(dir, 'gone.pem') }]), noBacklog);
  t.match((await missing.report()).parts.certificate, { status: 'down', detail: /ENOENT/ });
});

t.test('with tls.cert set: the implicit-TLS listeners are listed and the certificate part reads the served pairs', async (t) => {
  const dir = t.testdir({});
  const mx = writePair(dir, 'mx', await makeCertificate(['mx.agents.test'], { notAfter: new Date(Date.now() + 40 * 86_400_000) }));
  const other = writePair(dir, 'other', await makeCertificate(['mail.other.test'], { notAfter: new Date(Date.now() + 20.5 * 86_400_000) }));
  const app = await startApp(t, { dataDir: join(dir, 'data'), smtp: { hostname: 'mx.agents.test' }, tls: { ...mx, hosts: { 'mail.other.test': other } } });
  const { parts } = (await app.api('GET', '/api/v1/status')).body;
  const { submissionTls, imapTls } = app.app.ports;
  t.ok(submissionTls && imapTls, 'both implicit-TLS ports are bound');
  t.match(parts.listeners, { status: 'ok', submissionTls: { listening: true, port: submissionTls }, imapTls: { listening: true, port: imapTls } });
  t.match(parts.certificate, { status: 'ok', configured: true, daysLeft: 20 }, 'the SNI pair expires first');
});
