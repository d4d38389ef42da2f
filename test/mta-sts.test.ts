import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { createServer, type Server } from 'node:https';
import { join } from 'node:path';
import type { AddressInfo } from 'node:net';
import t, { type Test } from 'tap';
import { ConfigError } from '../src/config/load.js';
import { ManualClock } from '../src/core/clock.js';
import { readTrustAnchors } from '../src/tls/trust-anchors.js';
import { TargetRefused } from '../src/core/webhook-target.js';
import { HttpsMtaStsFetcher, type MtaStsHttpOptions } from '../src/net/mta-sts-http.js';
import { mxMatches, parsePolicy, stsRecordId } from '../src/services/delivery/mta-sts-policy.js';
import { startApp, type TestApp } from './helpers/app.js';
import { funded } from './helpers/agents.js';
import { startDnsServer, type TestDnsServer } from './helpers/dns-server.js';
import { startSink, type Sink } from './helpers/sink.js';
import { makeCa, makeCertificate, recordingLogger, type Pems } from './helpers/tls.js';

/** Outbound MTA-STS (RFC 8461): discovery, fetch through the checked HTTPS client, cache, enforcement. */

const MINUTE = 60_000;
const DOMAIN = 'sts.test';
const MX = 'mx.sts.test';

t.test('the TXT record: one v=STSv1 record with an id, else no policy (section 3.1)', async (t) => {
  t.equal(stsRecordId([['v=STSv1; id=20240101T000000;']]), '20240101T000000');
  t.equal(stsRecordId([['v=STSv1;', ' id=abc']]), 'abc', 'character-strings are joined');
  t.equal(stsRecordId([['v=spf1 -all'], ['v=STSv1; id=1; ext-x.1=v']]), '1', 'other records and extensions are ignored');
  t.equal(stsRecordId([['v=STSv1; id=1'], ['v=STSv1; id=2']]), null, 'two records: no policy');
  t.equal(stsRecordId([['v=STSv1']]), null, 'no id');
  t.equal(stsRecordId([['v=STSv1; id=has-dash']]), null, 'id is letters and digits');
  t.equal(stsRecordId([[`v=STSv1; id=${'a'.repeat(33)}`]]), null, 'id is at most 32 long');
  t.equal(stsRecordId([['v=STSv10; id=1']]), null);
  t.equal(stsRecordId([]), null);
});

t.test('the policy file (section 3.2) and its mx patterns (section 4.1)', async (t) => {
  const policy = parsePolicy('version: STSv1\r\nmode: enforce\r\nmx: mail.example.com\r\nmx: *.Example.NET.\r\nmax_age: 86400\r\nfuture: x\r\n', 'id1');
  t.same(policy, { id: 'id1', mode: 'enforce', mx: ['mail.example.com', '*.example.net'], maxAge: 86400 });
  t.ok(mxMatches(policy, 'MAIL.example.com.'));
  t.ok(mxMatches(policy, 'mx1.example.net'));
  t.notOk(mxMatches(policy, 'a.mx1.example.net'), 'a wildcard covers one label');
  t.notOk(mxMatches(policy, 'example.net'));
  t.notOk(mxMatches(policy, 'mail.example.com.evil.test'));
  t.same(parsePolicy('version: STSv1\nmode: none\nmax_age: 0\n', 'x').mode, 'none', 'LF line ends, no mx in mode none');
  for (const [text, reason] of [
    ['mode: enforce\nmx: a.b\nmax_age: 1\n', /version/],
    ['version: STSv1\nmode: strict\nmx: a.b\nmax_age: 1\n', /mode/],
    ['version: STSv1\nmode: enforce\nmax_age: 1\n', /no mx/],
    ['version: STSv1\nmode: enforce\nmx: a.b\nmax_age: 31557601\n', /max_age/],
    ['version: STSv1\nmode: enforce\nmx: a.b\nmax_age: -1\n', /max_age/],
    ['version: STSv1\nmode: enforce\nmx: a.*.b\nmax_age: 1\n', /mx line/],
    ['<html>not a policy</html>', /not a policy line/],
  ] as const)
    t.throws(() => parsePolicy(text, 'x'), reason as RegExp);
});

interface PolicyHost {
  server: Server;
  port: number;
  /** Requests per host name. */
  hits: Map<string, number>;
  /** What each host answers: a policy body, or a status and type. */
  answers: Map<string, { status?: number; type?: string; body: string; location?: string }>;
}

/** An HTTPS server on loopback playing the policy hosts `mta-sts.<domain>`, with a certificate of the test CA. */
const startPolicyHost = async (t: Test, ca: Pems, names: string[]): Promise<PolicyHost> => {
  const pems = await makeCertificate(names, { ca });
  const hits = new Map<string, number>();
  const answers: PolicyHost['answers'] = new Map();
  const server = createServer({ key: pems.key, cert: pems.cert }, (req, res) => {
    const host = String(req.headers.host ?? '').replace(/:\d+$/, '');
    hits.set(host, (hits.get(host) ?? 0) + 1);
    const answer = req.url === '/.well-known/mta-sts.txt' ? answers.get(host) : undefined;
    if (!answer) return res.writeHead(404).end();
    res
      .writeHead(answer.status ?? 200, { 'content-type': answer.type ?? 'text/plain', ...(answer.location && { location: answer.location }) })
      .end(answer.body);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  t.teardown(() => new Promise<void>((resolve) => server.close(() => resolve())));
  return { server, port: (server.address() as AddressInfo).port, hits, answers };
};

/** The test CA as `outbound.caFile`: the MX and policy host certificates verify through it. */
const caFile = (t: Test, ca: Pems): string => {
  // Not t.testdir: startApp makes the test's data folder there, afresh.
  const dir = mkdtempSync(join(tmpdir(), 'agentpost-ca-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const file = join(dir, 'ca.pem');
  writeFileSync(file, ca.cert);
  return file;
};

const enforce = (mx: string[], maxAge = 86400) => `version: STSv1\nmode: enforce\n${mx.map((name) => `mx: ${name}\n`).join('')}max_age: ${maxAge}\n`;

interface World {
  app: TestApp;
  sink: Sink;
  dns: TestDnsServer;
  policies: PolicyHost;
  clock: ManualClock;
  ca: Pems;
  log: ReturnType<typeof recordingLogger>;
}

/**
 * The recipient's world on loopback: a DNS server (MX, A, the _mta-sts TXT record), an MX that
 * offers STARTTLS with a certificate for its name (or not), and an HTTPS policy host.
 */
const world = async (t: Test, options: { mxCertificateFor?: string[] | null } = {}): Promise<World> => {
  const ca = await makeCa();
  const mxNames = options.mxCertificateFor === undefined ? [MX] : options.mxCertificateFor;
  const sink = await startSink(t, mxNames ? { tls: await makeCertificate(mxNames, { ca }) } : {});
  const dns = await startDnsServer(t, {
    [DOMAIN]: { MX: [{ exchange: MX, priority: 10 }] },
    [MX]: { A: ['127.0.0.1'] },
    [`mta-sts.${DOMAIN}`]: { A: ['127.0.0.1'] },
    [`_mta-sts.${DOMAIN}`]: { TXT: ['v=STSv1; id=one'] },
  });
  const policies = await startPolicyHost(t, ca, [`mta-sts.${DOMAIN}`]);
  policies.answers.set(`mta-sts.${DOMAIN}`, { body: enforce([MX]) });
  const clock = new ManualClock(new Date());
  const log = recordingLogger();
  const app = await startApp(
    t,
    {
      dns: { servers: dns.servers, timeoutMs: 1000, tries: 1 },
      // No session is kept for reuse: each delivery shows what a new connection is allowed.
      outbound: { port: sink.port, timeoutMs: 5000, allowLoopbackMx: true, maxIdlePerHost: 0, caFile: caFile(t, ca) },
    },
    { clock, mtaStsPort: policies.port, logger: log.logger },
  );
  return { app, sink, dns, policies, clock, ca, log };
};

const deliver = async (w: World, to: string) => {
  const agent = await funded(w.app, 1);
  const sent = await w.app.api('POST', '/api/v1/agent/send', { key: agent.apiKey, body: { to: [to], subject: 'sts', text: 'hello' } });
  await w.app.app.queues.delivery.runOnce();
  await w.app.app.queues.delivery.idle();
  const detail = (await w.app.api('GET', `/api/v1/agent/outbound/${sent.body.id}`, { key: agent.apiKey })).body;
  return detail.recipients[0];
};

t.test('enforce: the MX named by the policy, over STARTTLS with a certificate that verifies for its name', async (t) => {
  const w = await world(t);
  t.match(await deliver(w, `a@${DOMAIN}`), { status: 'delivered' });
  t.equal(w.sink.messages.length, 1);
  t.equal(w.sink.messages[0].secure, true, 'over TLS');
  t.equal(w.policies.hits.get(`mta-sts.${DOMAIN}`), 1, 'fetched once');
  t.match(await deliver(w, `b@${DOMAIN}`), { status: 'delivered' });
  t.equal(w.policies.hits.get(`mta-sts.${DOMAIN}`), 1, 'the second delivery uses the cached policy');
});

t.test('enforce: an MX the policy does not name is not used (deferred, nothing sent)', async (t) => {
  const w = await world(t);
  w.policies.answers.set(`mta-sts.${DOMAIN}`, { body: enforce(['other.sts.test', '*.elsewhere.test']) });
  t.match(await deliver(w, `a@${DOMAIN}`), { status: 'deferred', smtpCode: 451, enhancedCode: '4.7.5', diagnostic: /MTA-STS/ });
  t.equal(w.sink.messages.length, 0);
});

t.test('enforce: an MX without STARTTLS, or with a certificate for another name, gets nothing (deferred 4.7.5)', async (t) => {
  const plain = await world(t, { mxCertificateFor: null });
  t.match(await deliver(plain, `a@${DOMAIN}`), {
    status: 'deferred',
    smtpCode: 451,
    enhancedCode: '4.7.5',
    diagnostic: /MTA-STS policy of sts\.test \(id one\) requires TLS.*mx\.sts\.test/,
  });
  t.equal(plain.sink.messages.length, 0);
  const wrongName = await world(t, { mxCertificateFor: ['mx.other.test'] });
  t.match(await deliver(wrongName, `a@${DOMAIN}`), { status: 'deferred', smtpCode: 451, enhancedCode: '4.7.5', diagnostic: /MTA-STS.*mx\.sts\.test/ });
  t.equal(wrongName.sink.messages.length, 0);
});

t.test('testing: delivered as without a policy; what enforce would refuse is reported', async (t) => {
  const testing = (mx: string) => `version: STSv1\nmode: testing\nmx: ${mx}\nmax_age: 600\n`;
  const unnamed = await world(t, { mxCertificateFor: null });
  unnamed.policies.answers.set(`mta-sts.${DOMAIN}`, { body: testing('other.sts.test') });
  t.match(await deliver(unnamed, `a@${DOMAIN}`), { status: 'delivered' });
  t.equal(unnamed.sink.messages[0].secure, false, 'in the clear: the MX offers no STARTTLS');
  const warnings = (w: World) => w.log.entries.filter((entry) => entry.level === 'warn' && /mta-sts testing/.test(entry.message));
  t.match(warnings(unnamed), [
    { fields: { domain: DOMAIN, id: 'one', unnamed: [MX] } },
    { fields: { domain: DOMAIN, id: 'one', mx: MX, problem: 'no STARTTLS' } },
  ]);
  const wrongName = await world(t, { mxCertificateFor: ['mx.other.test'] });
  wrongName.policies.answers.set(`mta-sts.${DOMAIN}`, { body: testing(MX) });
  t.match(await deliver(wrongName, `a@${DOMAIN}`), { status: 'delivered' });
  t.equal(wrongName.sink.messages[0].secure, true, 'opportunistic TLS, unverified');
  t.match(warnings(wrongName), [{ fields: { mx: MX, problem: /certificate not valid for mx\.sts\.test/ } }]);
  t.equal(warnings(wrongName).length, 1);
  const good = await world(t);
  good.policies.answers.set(`mta-sts.${DOMAIN}`, { body: testing(MX) });
  t.match(await deliver(good, `a@${DOMAIN}`), { status: 'delivered' });
  t.equal(good.sink.messages[0].secure, true);
  t.equal(warnings(good).length, 0, 'a session enforce would allow is not reported');
});

t.test('none does not stop delivery; without the record nothing is fetched', async (t) => {
  const w = await world(t, { mxCertificateFor: null });
  w.policies.answers.set(`mta-sts.${DOMAIN}`, { body: 'version: STSv1\nmode: none\nmax_age: 600\n' });
  t.match(await deliver(w, `a@${DOMAIN}`), { status: 'delivered' });
  t.equal(w.sink.messages[0].secure, false, 'in the clear: the MX offers no STARTTLS');
  const none = await world(t, { mxCertificateFor: null });
  none.dns.remove(`_mta-sts.${DOMAIN}`);
  t.match(await deliver(none, `a@${DOMAIN}`), { status: 'delivered' });
  t.equal(none.policies.hits.size, 0, 'nothing fetched');
  const two = await world(t, { mxCertificateFor: null });
  two.dns.set(`_mta-sts.${DOMAIN}`, { TXT: ['v=STSv1; id=a', 'v=STSv1; id=b'] });
  t.match(await deliver(two, `a@${DOMAIN}`), { status: 'delivered' });
  t.equal(two.policies.hits.size, 0, 'two records are no policy (section 3.1)');
});

t.test('a policy that cannot be fetched is no policy; a redirect, another status or media type is not followed', async (t) => {
  for (const answer of [
    { status: 301, body: '', location: 'https://mta-sts.sts.test/elsewhere' },
    { status: 404, body: enforce([MX]) },
    { type: 'text/html', body: enforce([MX]) },
    { body: 'x'.repeat(70 * 1024) },
  ]) {
    const w = await world(t, { mxCertificateFor: null });
    w.policies.answers.set(`mta-sts.${DOMAIN}`, answer);
    t.match(await deliver(w, `a@${DOMAIN}`), { status: 'delivered' }, JSON.stringify({ ...answer, body: answer.body.length }));
  }
});

t.test('the cache: kept across a failed refetch, refetched when the id changes, gone after max_age', async (t) => {
  const w = await world(t);
  t.match(await deliver(w, `a@${DOMAIN}`), { status: 'delivered' });
  const queries = () => w.dns.queries.filter((query) => query === `TXT _mta-sts.${DOMAIN}`).length;
  const asked = queries();
  await deliver(w, `b@${DOMAIN}`);
  t.equal(queries(), asked, 'the record is not asked again within 10 minutes');
  // The id changes, but the new policy cannot be had: the cached one still applies.
  w.dns.set(`_mta-sts.${DOMAIN}`, { TXT: ['v=STSv1; id=two'] });
  w.policies.answers.set(`mta-sts.${DOMAIN}`, { status: 500, body: '' });
  w.clock.advance(11 * MINUTE);
  w.sink.offerStartTls(false); // as an attacker in the path would have it
  t.match(await deliver(w, `c@${DOMAIN}`), { status: 'deferred', diagnostic: /MTA-STS/ }, 'still enforced from the cache');
  t.equal(w.policies.hits.get(`mta-sts.${DOMAIN}`), 2);
  // With the new policy in place it is fetched and applies.
  w.policies.answers.set(`mta-sts.${DOMAIN}`, { body: 'version: STSv1\nmode: none\nmax_age: 600\n' });
  w.clock.advance(11 * MINUTE);
  t.match(await deliver(w, `d@${DOMAIN}`), { status: 'delivered' });
  t.equal(w.policies.hits.get(`mta-sts.${DOMAIN}`), 3);
  // An enforced policy for 20 minutes; the record then disappears (section 5.1: the cache still applies).
  w.dns.set(`_mta-sts.${DOMAIN}`, { TXT: ['v=STSv1; id=three'] });
  w.policies.answers.set(`mta-sts.${DOMAIN}`, { body: enforce([MX], 20 * 60) });
  w.clock.advance(11 * MINUTE);
  t.match(await deliver(w, `e@${DOMAIN}`), { status: 'deferred', diagnostic: /MTA-STS/ });
  w.dns.remove(`_mta-sts.${DOMAIN}`);
  w.clock.advance(11 * MINUTE);
  t.match(await deliver(w, `f@${DOMAIN}`), { status: 'deferred', diagnostic: /MTA-STS/ }, 'no record, but the cached policy has 9 minutes left');
  w.clock.advance(11 * MINUTE);
  t.match(await deliver(w, `g@${DOMAIN}`), { status: 'delivered' }, 'past max_age and without a record there is no policy');
});

t.test('a policy in use is fetched again after half its max_age, which renews it; a failed renewal keeps it until it runs out', async (t) => {
  const w = await world(t);
  w.policies.answers.set(`mta-sts.${DOMAIN}`, { body: enforce([MX], 60 * 60) });
  t.match(await deliver(w, `a@${DOMAIN}`), { status: 'delivered' });
  w.clock.advance(20 * MINUTE);
  await deliver(w, `b@${DOMAIN}`);
  t.equal(w.policies.hits.get(`mta-sts.${DOMAIN}`), 1, 'same id, a third of max_age spent: the cached policy');
  w.clock.advance(15 * MINUTE);
  await deliver(w, `c@${DOMAIN}`);
  t.equal(w.policies.hits.get(`mta-sts.${DOMAIN}`), 2, 'same id, past half: fetched again');
  // The policy host now fails and the MX stops offering STARTTLS; the renewed policy holds
  // past the first fetch's expiry (60 minutes), until 60 minutes after the renewal.
  w.policies.answers.set(`mta-sts.${DOMAIN}`, { status: 503, body: '' });
  w.sink.offerStartTls(false);
  w.clock.advance(40 * MINUTE);
  t.match(await deliver(w, `d@${DOMAIN}`), { status: 'deferred', enhancedCode: '4.7.5' }, '75 minutes after the first fetch: still enforced');
  t.equal(w.policies.hits.get(`mta-sts.${DOMAIN}`), 3, 'the renewal was tried');
  w.clock.advance(25 * MINUTE);
  t.match(await deliver(w, `e@${DOMAIN}`), { status: 'delivered' }, 'past max_age of the renewal, with no new policy to be had: none');
});

t.test("the fetch has the webhook client's checks: public addresses only, a certificate that verifies for mta-sts.<domain>", async (t) => {
  const ca = await makeCa();
  const host = await startPolicyHost(t, ca, [`mta-sts.${DOMAIN}`]);
  host.answers.set(`mta-sts.${DOMAIN}`, { body: enforce([MX]) });
  const to = (address: string) => ({ resolveAddresses: async () => [address] });
  const fetcher = (address: string, options: Partial<MtaStsHttpOptions> = {}) =>
    new HttpsMtaStsFetcher(to(address), { allowLoopback: true, timeoutMs: 5000, port: host.port, extraCa: [ca.cert], ...options });
  t.equal(await fetcher('127.0.0.1').fetchPolicy(DOMAIN), enforce([MX]));
  await t.rejects(fetcher('127.0.0.1', { allowLoopback: false }).fetchPolicy(DOMAIN), TargetRefused, 'loopback only in tests, and then any port');
  await t.rejects(
    new HttpsMtaStsFetcher(to('10.1.2.3'), { allowLoopback: false, timeoutMs: 5000 }).fetchPolicy(DOMAIN),
    { code: 'blocked_address' },
    'a private address is never asked',
  );
  await t.rejects(fetcher('127.0.0.1', { extraCa: undefined }).fetchPolicy(DOMAIN), /self[- ]signed|unable to (get|verify)/i, 'an untrusted certificate');
  await t.rejects(fetcher('127.0.0.1').fetchPolicy('other.test'), /altnames|does not match/i, 'a certificate for another name');
});

t.test('outbound.caFile: read at start; unreadable, empty or broken stops the start', async (t) => {
  const ca = await makeCa();
  t.match(readTrustAnchors(caFile(t, ca)), /^-----BEGIN CERTIFICATE-----/);
  const dir = t.testdir({ 'none.pem': 'no certificate here\n', 'broken.pem': '-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n' });
  t.throws(() => readTrustAnchors(join(dir, 'missing.pem')), new ConfigError('outbound.caFile', `${join(dir, 'missing.pem')} cannot be read (ENOENT)`));
  t.throws(() => readTrustAnchors(join(dir, 'none.pem')), { name: 'ConfigError', message: /outbound\.caFile.*holds no PEM certificate/ });
  t.throws(() => readTrustAnchors(join(dir, 'broken.pem')), { name: 'ConfigError', message: /outbound\.caFile.*cannot be parsed/ });
});
