// `agentpost doctor` and the deployment checks behind it, against a real DNS server on
// loopback serving the zone each case writes, and the app's real listeners.
import { generate } from 'selfsigned';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { runCli } from '../bin/cli.js';
import { reverseName } from '../src/core/dns.js';
import type { CheckResult, DoctorReport } from '../src/core/doctor.js';
import { checkCertificate } from '../src/services/health/checks-listeners.js';
import { startApp, type TestApp } from './helpers/app.js';
import { startDnsServer, type TestDnsServer } from './helpers/dns-server.js';
import { makeCertificate, writePair } from './helpers/tls.js';

const DOMAIN = 'team.test';
const HOST = 'mx.team.test';

/** A deployment whose records are all right: MX, A, PTR, SPF, DKIM, DMARC, MTA-STS and TLS-RPT. */
const healthyZone = async (dns: TestDnsServer, app: TestApp) => {
  const dkim = await app.app.services.dkim.generate(DOMAIN);
  dns.set(DOMAIN, { MX: [{ exchange: HOST, priority: 10 }], TXT: ['v=spf1 ip4:127.0.0.1 -all'] });
  dns.set(HOST, { A: ['127.0.0.1'] });
  dns.set(reverseName('127.0.0.1'), { PTR: [HOST] });
  dns.set(dkim.recordName, { TXT: [dkim.recordValue] });
  dns.set(`_dmarc.${DOMAIN}`, { TXT: ['v=DMARC1; p=quarantine'] });
  dns.set(`_mta-sts.${DOMAIN}`, { TXT: ['v=STSv1; id=20260301'] });
  dns.set(`_smtp._tls.${DOMAIN}`, { TXT: [['v=TLSRPTv1; ', `rua=mailto:postmaster@${DOMAIN}`]] });
  return dkim;
};

type Settings = Parameters<typeof startApp>[1] & { dataDir: string; smtp: Record<string, unknown> };

/**
 * The app with smtp.postmaster naming a mailbox of its own (RFC 5321 section 4.5.1), as a
 * healthy deployment has: a first start on the same data folder makes the mailbox, whose
 * address is not known before.
 */
const startWithPostmaster = async (t: Parameters<typeof startApp>[0], settings: Settings) => {
  const first = await startApp(t, settings);
  const ops = await first.register('ops');
  await first.app.stop();
  return startApp(t, { ...settings, smtp: { ...settings.smtp, postmaster: ops.email } });
};

const start = async (t: Parameters<typeof startApp>[0]) => {
  const dns = await startDnsServer(t);
  const dataDir = join(t.testdir({}), 'data');
  const app = await startWithPostmaster(t, { dataDir, mailDomain: DOMAIN, smtp: { hostname: HOST }, dns: { servers: dns.servers, timeoutMs: 300, tries: 1 } });
  return { dns, app };
};

const find = (report: DoctorReport, check: string, subject?: string): CheckResult => {
  const found = report.checks.find((result) => result.check === check && (subject === undefined || result.subject === subject));
  if (!found) throw new Error(`no ${check} check for ${subject ?? 'any subject'}`);
  return found;
};

t.test('a deployment with every record right: nothing fails', async (t) => {
  const { dns, app } = await start(t);
  const dkim = await healthyZone(dns, app);
  const report = await app.app.services.doctor.run();
  for (const check of ['mx', 'host-address', 'reverse-dns', 'spf', 'dkim', 'dmarc', 'mta-sts', 'tls-rpt', 'postmaster']) {
    t.equal(find(report, check).status, 'ok', `${check}: ${find(report, check).detail}`);
  }
  t.match(find(report, 'dkim').detail, `${dkim.recordName} carries the signing key`);
  t.match(find(report, 'certificate'), { status: 'warn', detail: /no certificate configured/, fix: /tls\.cert/ });
  for (const [name, port] of [
    ['smtp', app.smtpPort],
    ['submission', app.submissionPort],
    ['imap', app.imapPort],
    ['http', app.app.ports.http],
  ] as const) {
    t.match(find(report, 'port', `${name} 127.0.0.1:${port}`), { status: 'ok' }, `${name} answers on its bound port`);
  }
  t.match(find(report, 'port', `${HOST}:25`), { status: 'warn', detail: /listens on 127\.0\.0\.1 only/ });
  t.equal(report.ok, true, 'warnings do not fail the deployment');
});

t.test('each record missing or wrong fails with the exact record to publish', async (t) => {
  const { dns, app } = await start(t);
  const dkim = await healthyZone(dns, app);
  dns.set(DOMAIN, { TXT: ['v=spf1 ip4:192.0.2.1 -all'] });
  dns.set(dkim.recordName, { TXT: ['v=DKIM1; k=rsa; p=MIIBIjANBgkqhkiG9w0BAQEFAAOCAQ8AMIIBCgKCAQEAold'] });
  dns.remove(`_dmarc.${DOMAIN}`);
  dns.remove(`_mta-sts.${DOMAIN}`);
  dns.set(reverseName('127.0.0.1'), { PTR: ['host-127-0-0-1.provider.test'] });
  dns.set('host-127-0-0-1.provider.test', { A: ['127.0.0.1'] });
  const report = await app.app.services.doctor.run();

  t.match(find(report, 'mx'), { status: 'fail', detail: /no MX record/, publish: { type: 'MX', name: DOMAIN, value: `10 ${HOST}.` } });
  t.match(
    find(report, 'spf'),
    {
      status: 'fail',
      detail: /does not let 127\.0\.0\.1 \(fail\) send/,
      publish: { type: 'TXT', name: DOMAIN, value: 'v=spf1 ip4:192.0.2.1 ip4:127.0.0.1 -all' },
    },
    'our address goes in before -all, the rest of the record stays',
  );
  t.match(find(report, 'dkim'), { status: 'fail', detail: /another key/, publish: { type: 'TXT', name: dkim.recordName, value: dkim.recordValue } });
  t.match(find(report, 'dmarc'), { status: 'fail', publish: { type: 'TXT', name: `_dmarc.${DOMAIN}`, value: 'v=DMARC1; p=quarantine; adkim=r; aspf=r' } });
  t.match(find(report, 'mta-sts'), {
    status: 'warn',
    publish: { name: `_mta-sts.${DOMAIN}`, value: /^v=STSv1; id=\d{14}$/ },
    fix: /https:\/\/mta-sts\.team\.test\/\.well-known\/mta-sts\.txt/,
  });
  t.match(find(report, 'reverse-dns'), {
    status: 'warn',
    detail: /host-127-0-0-1\.provider\.test forward-confirms, but is not mx\.team\.test/,
    fix: /PTR\) to mx\.team\.test/,
  });
  t.equal(report.ok, false);

  dns.set(`_dmarc.${DOMAIN}`, { TXT: ['v=DMARC1; p=none'] });
  dns.remove(reverseName('127.0.0.1'));
  const again = await app.app.services.doctor.run();
  t.match(find(again, 'dmarc'), { status: 'warn', detail: /p=none only monitors/ });
  t.match(find(again, 'reverse-dns'), { status: 'fail', detail: 'no PTR record', fix: /ask the provider of 127\.0\.0\.1/ });
});

t.test('several domains, given addresses, and a DNS server that does not answer', async (t) => {
  const { dns, app } = await start(t);
  await healthyZone(dns, app);
  dns.set('other.test', { MX: [{ exchange: HOST, priority: 5 }], TXT: ['v=spf1 ip4:127.0.0.1 ip4:127.0.0.2 -all'] });
  dns.silence('_dmarc.other.test');
  const report = await app.app.services.doctor.run({ domains: ['team.test', 'Other.Test.'], addresses: ['127.0.0.1', '127.0.0.2'] });
  t.same(
    report.checks.filter((check) => check.check === 'mx').map((check) => [check.subject, check.status]),
    [
      ['team.test', 'ok'],
      ['other.test', 'ok'],
    ],
  );
  t.match(find(report, 'spf', 'team.test'), { status: 'fail', detail: /127\.0\.0\.2 \(fail\)/ });
  t.match(find(report, 'spf', 'other.test'), { status: 'ok' });
  t.match(
    find(report, 'dmarc', 'other.test'),
    { status: 'fail', detail: 'the lookup of _dmarc.other.test failed (ETIMEOUT)' },
    'a timeout is a result with its reason',
  );
  t.match(find(report, 'dkim', 'other.test'), { status: 'fail', fix: 'run agentpost dkim generate other.test, then publish the record it prints' });
  t.match(find(report, 'host-address'), { status: 'warn', detail: /not to 127\.0\.0\.2/ });
  await t.rejects(app.app.services.doctor.run({ domains: ['not a domain'] }), { code: 'invalid_input' });
  await t.rejects(app.app.services.doctor.run({ addresses: ['mx.team.test'] }), { code: 'invalid_input' });
});

t.test('the certificate must name the MX host and have 14 days left', async (t) => {
  const now = new Date('2026-03-01T12:00:00Z');
  const pem = async (name: string, days: number) =>
    (
      await generate([{ name: 'commonName', value: name }], {
        notBeforeDate: new Date(now.getTime() - 86_400_000),
        notAfterDate: new Date(now.getTime() + days * 86_400_000),
        keySize: 2048,
        extensions: [{ name: 'subjectAltName', altNames: [{ type: 2, value: name }] }],
      })
    ).cert;
  const check = async (name: string, days: number) => (await checkCertificate(async () => [{ source: 'cert.pem', pem: await pem(name, days) }], HOST, now))[0];
  t.match(await check(HOST, 60), { status: 'ok', detail: 'cert.pem covers mx.team.test, 60 days left' });
  t.match(await check('*.team.test', 60), { status: 'ok' }, 'a wildcard covers one label');
  t.match(await check('*.test', 60), { status: 'fail', detail: /names \*\.test, not mx\.team\.test/ });
  t.match(await check(HOST, 13), { status: 'fail', detail: 'cert.pem expires in 13 days', fix: /renew/ });
  t.match(await check(HOST, -2), { status: 'fail', detail: /expired/ });
});

t.test('with tls.cert: each pair is checked against the name it serves, and the implicit-TLS ports answer', async (t) => {
  const dir = t.testdir({});
  const mx = writePair(dir, 'mx', await makeCertificate([HOST]));
  const other = writePair(dir, 'other', await makeCertificate(['mail.other.test']));
  const dns = await startDnsServer(t);
  const app = await startWithPostmaster(t, {
    dataDir: join(dir, 'data'),
    mailDomain: DOMAIN,
    smtp: { hostname: HOST },
    dns: { servers: dns.servers, timeoutMs: 300, tries: 1 },
    tls: { ...mx, hosts: { 'mail.other.test': other } },
  });
  await healthyZone(dns, app);
  const report = await app.app.services.doctor.run();
  t.match(find(report, 'certificate', HOST), { status: 'ok', detail: `${mx.cert} covers ${HOST}, 89 days left` });
  t.match(find(report, 'certificate', 'mail.other.test'), { status: 'ok' }, 'an SNI pair is not judged against the MX name');
  const { submissionTls, imapTls } = app.app.ports;
  t.match(find(report, 'port', `submissionTls 127.0.0.1:${submissionTls}`), { status: 'ok' });
  t.match(find(report, 'port', `imapTls 127.0.0.1:${imapTls}`), { status: 'ok' });
  t.equal(report.ok, true);
});

t.test('agentpost doctor prints a line per check and exits 1 when one fails, 0 when none does', async (t) => {
  const { dns, app } = await start(t);
  await healthyZone(dns, app);
  // The command reads the same settings as the server it checks, here from a config file.
  const config = join(app.app.config.dataDir, 'doctor.json');
  writeFileSync(
    config,
    JSON.stringify({
      dataDir: app.app.config.dataDir,
      mailDomain: DOMAIN,
      log: { level: 'silent' },
      dns: { servers: dns.servers },
      smtp: { hostname: HOST, port: app.smtpPort, postmaster: app.app.config.smtp.postmaster },
      submission: { port: app.submissionPort },
      imap: { port: app.imapPort },
      http: { port: app.app.ports.http },
    }),
  );
  const run = async (...args: string[]) => {
    const out: string[] = [];
    const write = process.stdout.write;
    process.stdout.write = ((chunk: string) => out.push(String(chunk)) > 0) as typeof process.stdout.write;
    try {
      const code = await runCli(['doctor', ...args, '--config', config]);
      return { code, out: out.join('') };
    } finally {
      process.stdout.write = write;
    }
  };
  const passing = await run();
  t.equal(passing.code, 0, passing.out);
  t.match(passing.out, /^ok {4}mx +team\.test +mx\.team\.test \(preference 10\)$/m);
  t.match(passing.out, /^warn {2}certificate +mx\.team\.test +no certificate configured[^\n]*\n +fix: set tls\.cert/m);
  t.match(passing.out, /\d+ ok, \d+ warn, 0 fail: nothing fails\n$/);

  dns.remove(DOMAIN);
  const failing = await run();
  t.equal(failing.code, 1);
  t.match(
    failing.out,
    /^fail {2}mx +team\.test +no MX record: mail for the domain cannot find this server\n +publish: team\.test\. IN MX 10 mx\.team\.test\.$/m,
  );
  t.match(failing.out, /^fail {2}spf +team\.test +no SPF record[^\n]*\n +publish: team\.test\. IN TXT "v=spf1 ip4:127\.0\.0\.1 -all"$/m);
  t.match(failing.out, /\d+ ok, \d+ warn, 2 fail: fix the failing checks\n$/);

  const report = JSON.parse((await run('--json')).out) as DoctorReport;
  t.equal(report.ok, false);
  t.same(
    report.checks.filter((check) => check.status === 'fail').map((check) => check.check),
    ['mx', 'spf'],
  );
  t.equal((await run('--address', 'nonsense')).code, 2, 'a bad address is a usage error');
  t.equal((await run('other.test', '--address', '127.0.0.1')).code, 1, 'domains and addresses as the console passes them');
});
