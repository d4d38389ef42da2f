// The console's Health page: the deployment checks of `agentpost doctor` for the mail domain
// and the owner's verified domains, against a real DNS server on loopback.
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { runCli } from '../bin/cli.js';
import { createLogger } from '../src/core/logger.js';
import { consoleClient, signedInConsole } from './helpers/console.js';
import { addVerifiedDomain, hostedHolder, MX_HOST, startDomainApp } from './helpers/domains.js';
import { makeOwner } from './helpers/owners.js';
import { makeCertificate, writePair } from './helpers/tls.js';

t.test('Health lists every check with its status and the record to publish; only for a signed-in owner', async (t) => {
  // The operator named in any case (config owners.operators): the whole deployment.
  const { app } = await startDomainApp(t, { mailDomain: 'agents.test', owners: { operators: ['OPS@example.com'] } });
  const visitor = consoleClient(app.baseUrl);
  const away = await visitor.get('/health');
  t.equal(away.status, 303, 'a visitor is sent to sign in');
  t.equal(away.location, '/sign-in');

  const owner = await makeOwner(app, 'ops@example.com', 'health page password');
  const client = consoleClient(app.baseUrl);
  await client.get('/sign-in');
  t.equal((await client.post('/sign-in', { email: owner.email, password: owner.password })).status, 303);
  const page = await client.get('/health');
  t.equal(page.status, 200);
  t.match(page.text, /<a href="\/health" aria-current="page">Health<\/a>/, 'in the navigation');
  t.match(page.text, /failing: mail may not be sent or received reliably/);
  t.match(page.text, /<span class="badge bad">fail<\/span><\/td><td>dmarc<\/td><td>agents\.test<\/td>/);
  t.match(page.text, /<code>_dmarc\.agents\.test\. IN TXT &quot;v=DMARC1; p=quarantine/, 'the record to publish, escaped');
  t.match(page.text, /<span class="badge warn">warn<\/span><\/td><td>certificate<\/td>/);
  t.match(page.text, new RegExp(`<td>port</td><td>smtp 127\\.0\\.0\\.1:${app.smtpPort}</td>`), 'the listeners and their ports');
  t.match(page.text, /You operate this service/);
  t.notMatch(page.text, /<script/i);
});

t.test('the checks cover every verified domain besides the mail domain', async (t) => {
  const { app, dns } = await startDomainApp(t, { mailDomain: 'agents.test' });
  await hostedHolder(app, dns, 'team.example');
  const before = await app.app.services.doctor.run();
  t.ok(
    before.checks.some((check) => check.check === 'mx' && check.subject === 'team.example'),
    'the verified domain is checked',
  );
  t.ok(before.checks.some((check) => check.check === 'mx' && check.subject === 'agents.test'));
  const named = await app.app.services.doctor.run({ domains: ['agents.test'] });
  t.notOk(
    named.checks.some((check) => check.subject === 'team.example'),
    'domains named replace the default list',
  );
});

t.test("an owner who does not operate the service sees its own domains' checks only: no listeners, certificate files or other owner's domains", async (t) => {
  const dir = t.testdir({});
  const files = writePair(dir, 'mx', await makeCertificate([MX_HOST]));
  const { app, dns } = await startDomainApp(t, {
    mailDomain: 'agents.test',
    dataDir: join(dir, 'data'),
    tls: files,
    owners: { operators: ['ops@example.com'] },
  });
  const ops = await makeOwner(app, 'ops@example.com', 'health page password');
  const ada = await makeOwner(app, 'ada@example.com', 'health page password');
  const bob = await makeOwner(app, 'bob@example.com', 'health page password');
  await addVerifiedDomain(app, dns, ada.token, 'ada.example');
  await hostedHolder(app, dns, 'agent-held.example');
  const healthOf = async (owner: { email: string; password: string }) => (await (await signedInConsole(app.baseUrl, owner)).get('/health')).text;

  const adas = await healthOf(ada);
  t.match(adas, /<td>mx<\/td><td>ada\.example<\/td>/, 'her verified domain is checked');
  t.match(adas, /<td>dkim<\/td><td>ada\.example<\/td>/);
  t.notMatch(adas, /<td>(port|certificate|host-address|reverse-dns)<\/td>/, 'nothing of the deployment itself');
  t.notMatch(
    adas,
    new RegExp(`${String(app.smtpPort)}|${String(app.imapPort)}|mx\\.crt|${dir.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')}`),
    'no port, no certificate file',
  );
  t.notMatch(adas, /<td>agents\.test<\/td>/, "the service's own mail domain is checked for the operator");
  t.notMatch(adas, /agent-held\.example/, 'a domain held by someone else is not shown');
  t.match(adas, /shown to its operators/);
  const bobs = await healthOf(bob);
  t.notMatch(bobs, /ada\.example/, "another owner does not learn of ada's domain");
  t.match(bobs, /You have no verified domain yet/);
  t.notMatch(bobs, /<td>port<\/td>/);

  const opss = await healthOf(ops);
  t.match(
    opss,
    new RegExp(`<td>certificate</td><td>${MX_HOST.replace(/\./g, '\\.')}</td><td>${files.cert.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&')} covers`),
    'the operator sees the certificate file',
  );
  t.match(opss, /<td>port<\/td><td>imapTls 127\.0\.0\.1:\d+<\/td><td>answers &quot;\* OK/, 'and every listener, the implicit-TLS ones probed over TLS');
  t.notMatch(opss, /ada\.example/, "an operator's page checks its own domains, not every owner's");
});

t.test('a Health visit and agentpost doctor log no TLS warning for their own probe of the implicit-TLS ports', async (t) => {
  const dir = t.testdir({});
  const files = writePair(dir, 'mx', await makeCertificate([MX_HOST]));
  const lines: string[] = [];
  const logger = createLogger('debug', (line) => lines.push(line));
  const { app } = await startDomainApp(
    t,
    { mailDomain: 'agents.test', dataDir: join(dir, 'data'), tls: files, owners: { operators: ['ops@example.com'] } },
    { logger },
  );
  const ops = await makeOwner(app, 'ops@example.com', 'health page password');
  const client = await signedInConsole(app.baseUrl, ops);
  const logged = lines.length;
  const page = await client.get('/health');
  t.match(page.text, /<td>port<\/td><td>submissionTls 127\.0\.0\.1:\d+<\/td><td>answers &quot;220 [^<]* over TLS<\/td>/);
  const config = join(dir, 'doctor.json');
  writeFileSync(
    config,
    JSON.stringify({
      dataDir: app.app.config.dataDir,
      mailDomain: 'agents.test',
      log: { level: 'silent' },
      dns: app.app.config.dns,
      smtp: { hostname: MX_HOST, port: app.smtpPort },
      tls: files,
      submission: { port: app.submissionPort, tlsPort: app.app.ports.submissionTls },
      imap: { port: app.imapPort, tlsPort: app.app.ports.imapTls },
      http: { port: app.app.ports.http },
    }),
  );
  const write = process.stdout.write;
  process.stdout.write = (() => true) as typeof process.stdout.write;
  try {
    await runCli(['doctor', '--config', config]);
  } finally {
    process.stdout.write = write;
  }
  // Any TLS line the server logs for a probe arrives when the probe's socket closes.
  await new Promise((resolve) => setTimeout(resolve, 300));
  const tlsLines = lines.slice(logged).filter((line) => /tls|handshake|listener error/i.test(line));
  t.same(tlsLines, [], 'the server logged nothing about the probes');
});
