import { request } from 'node:http';
import t, { type Test } from 'tap';
import { domainKey, MX_HOST, publish, startDomainApp, type DnsRecordView } from './helpers/domains.js';

/**
 * Verification over the wire: the app's one resolver asks a real DNS server on loopback that
 * serves what each test writes (issue: "DNS, for real").
 */

const byName = (results: { name: string; type: string }[], type: string, name: string) => {
  const found = results.find((result) => result.type === type && result.name === name);
  if (!found) throw new Error(`no ${type} result for ${name}`);
  return found as any;
};

const setup = async (t: Test, domain = 'team.example') => {
  const { app, dns } = await startDomainApp(t);
  const agent = await app.register();
  const key = await domainKey(app, agent.apiKey);
  const added = await app.api('POST', '/api/user/domains', { key, body: { domain } });
  t.equal(added.status, 200, 'added');
  const records = added.body.records as DnsRecordView[];
  const verify = () => app.api('POST', `/api/user/domains/${added.body.id}/verify`, { key });
  return { app, dns, agent, key, id: added.body.id as string, records, verify, record: (kind: string) => recordOf(records, kind, domain) };
};

const recordOf = (records: DnsRecordView[], kind: string, domain: string): DnsRecordView => {
  const names: Record<string, (r: DnsRecordView) => boolean> = {
    ownership: (r) => r.name === `_agentpost.${domain}`,
    mx: (r) => r.type === 'MX',
    spf: (r) => r.type === 'TXT' && r.name === domain,
    dkim: (r) => r.name.endsWith(`._domainkey.${domain}`),
    dmarc: (r) => r.name === `_dmarc.${domain}`,
    'mta-sts': (r) => r.name === `_mta-sts.${domain}`,
    'mta-sts-host': (r) => r.name === `mta-sts.${domain}`,
    'tls-rpt': (r) => r.name === `_smtp._tls.${domain}`,
  };
  return records.find(names[kind]) as DnsRecordView;
};

t.test('the add answer lists the exact records, each with type, name, value and purpose', async (t) => {
  const { records, agent, record } = await setup(t);
  t.equal(records.length, 8);
  t.match(record('ownership'), { type: 'TXT', value: /^agentpost-verification=[0-9a-f]{32}$/ });
  t.same(record('mx'), { ...record('mx'), type: 'MX', name: 'team.example', value: `10 ${MX_HOST}` });
  t.equal(record('spf').value, `v=spf1 a:${MX_HOST} -all`, 'SPF names the host mail leaves from');
  t.match(record('dkim'), { type: 'TXT', name: /^ap[a-z0-9]{8}\._domainkey\.team\.example$/, value: /^v=DKIM1; k=rsa; p=[A-Za-z0-9+/]+=*$/ });
  t.equal(record('dmarc').value, 'v=DMARC1; p=quarantine; adkim=r; aspf=r');
  t.match(record('mta-sts').value, /^v=STSv1; id=[a-z0-9]{16}$/);
  t.same(record('mta-sts-host'), { ...record('mta-sts-host'), type: 'CNAME', value: MX_HOST });
  t.equal(record('tls-rpt').value, `v=TLSRPTv1; rua=mailto:${agent.email}`);
  for (const entry of records) t.ok(entry.purpose.length > 20, `${entry.name} says what it is for`);
});

t.test('nothing published: every result says NXDOMAIN, and the domain stays pending', async (t) => {
  const { verify, app, key, id } = await setup(t);
  const answer = await verify();
  t.equal(answer.status, 200);
  t.equal(answer.body.verified, false);
  t.equal(answer.body.status, 'pending');
  t.equal(answer.body.results.length, 8, 'one result per record');
  const ownership = byName(answer.body.results, 'TXT', '_agentpost.team.example');
  t.match(ownership, { ok: false, found: [], detail: /_agentpost\.team\.example does not exist \(NXDOMAIN\)/ });
  t.match(answer.body.statusReason, /ownership TXT: .*NXDOMAIN.*; MX: team\.example does not exist/);
  const listed = await app.api('GET', `/api/user/domains/${id}`, { key });
  t.match(listed.body, { status: 'pending', statusReason: answer.body.statusReason, checkedAt: String });
  t.equal(listed.body.results.length, 8, 'the last results are kept');
});

t.test('all records published: every check is ok; ownership plus MX verify it', async (t) => {
  const { verify, dns, records } = await setup(t);
  publish(dns, records);
  const answer = await verify();
  t.equal(answer.body.verified, true);
  t.equal(answer.body.status, 'verified');
  t.equal(answer.body.statusReason, null);
  for (const result of answer.body.results) t.ok(result.ok, `${result.type} ${result.name}: ${result.detail}`);
  t.same(byName(answer.body.results, 'MX', 'team.example').found, [`10 ${MX_HOST}`]);
});

t.test('wrong values: each result says what was found instead; only ownership and MX decide', async (t) => {
  const { verify, dns, record } = await setup(t);
  dns.set('_agentpost.team.example', { TXT: ['agentpost-verification=0000', 'google-site-verification=abc'] });
  dns.set('team.example', { MX: [{ priority: 10, exchange: 'mx.elsewhere.example' }], TXT: ['v=spf1 include:_spf.elsewhere.example -all'] });
  dns.set(record('dkim').name, { TXT: ['v=DKIM1; k=rsa; p=AAAAB3NzaC1yc2E'] });
  dns.set('_dmarc.team.example', { TXT: ['v=DMARC1; p=none'] });
  dns.set('_mta-sts.team.example', { TXT: ['v=STSv1; id=1', 'v=STSv1; id=2'] });
  const answer = await verify();
  t.equal(answer.body.verified, false);
  const results = answer.body.results;
  t.match(byName(results, 'TXT', '_agentpost.team.example'), {
    ok: false,
    found: ['agentpost-verification=0000', 'google-site-verification=abc'],
    detail: /none of the 2 TXT record/,
  });
  t.match(byName(results, 'MX', 'team.example'), { ok: false, found: ['10 mx.elsewhere.example'], detail: `the MX records do not name ${MX_HOST}` });
  t.match(byName(results, 'TXT', 'team.example'), { ok: false, detail: `the SPF record does not name a:${MX_HOST}` });
  t.match(byName(results, 'TXT', record('dkim').name), { ok: false, detail: /another public key/ });
  t.match(byName(results, 'TXT', '_dmarc.team.example'), { ok: false, detail: /p=none only monitors/ });
  t.match(byName(results, 'TXT', '_mta-sts.team.example'), { ok: false, detail: /exactly one v=STSv1 record/ });
  t.match(byName(results, 'TXT', '_smtp._tls.team.example'), { ok: false, detail: /NXDOMAIN/ });
});

t.test('an MX preferred over ours, and two SPF records, are not ok', async (t) => {
  const { verify, dns, record } = await setup(t);
  dns.set('_agentpost.team.example', { TXT: [record('ownership').value] });
  dns.set('team.example', {
    MX: [
      { priority: 20, exchange: MX_HOST },
      { priority: 5, exchange: 'mx.old.example' },
    ],
    TXT: [record('spf').value, 'v=spf1 -all'],
  });
  const answer = await verify();
  t.equal(answer.body.verified, false, 'senders would try the other server first');
  t.match(byName(answer.body.results, 'MX', 'team.example'), {
    found: ['5 mx.old.example', `20 ${MX_HOST}`],
    detail: /preference 20, but senders try 5 mx\.old\.example first/,
  });
  t.match(byName(answer.body.results, 'TXT', 'team.example'), { ok: false, detail: /2 SPF records/ });
  t.match(byName(answer.body.results, 'TXT', '_agentpost.team.example'), { ok: true });
});

t.test("several TXT strings are read joined; CNAME'd names are followed", async (t) => {
  const { verify, dns, record } = await setup(t);
  const token = record('ownership').value;
  // One record of three character-strings (RFC 1035 section 3.3.14): read as one text.
  dns.set('_agentpost.team.example', { TXT: [[token.slice(0, 10), token.slice(10, 30), token.slice(30)]] });
  dns.set('team.example', { MX: [{ priority: 10, exchange: `${MX_HOST}.` }] });
  // The DKIM key is long enough to need several strings, and it sits behind a CNAME.
  dns.set(record('dkim').name, { CNAME: 'keys.provider.example' });
  dns.set('keys.provider.example', { TXT: [record('dkim').value] });
  dns.set('_dmarc.team.example', { CNAME: 'dmarc.provider.example' });
  dns.set('dmarc.provider.example', { TXT: [record('dmarc').value] });
  dns.set('mta-sts.team.example', { CNAME: MX_HOST });
  const answer = await verify();
  t.equal(answer.body.verified, true);
  t.match(byName(answer.body.results, 'TXT', '_agentpost.team.example'), { ok: true, found: [token] });
  t.match(byName(answer.body.results, 'TXT', record('dkim').name), { ok: true });
  t.match(byName(answer.body.results, 'TXT', '_dmarc.team.example'), { ok: true, found: [record('dmarc').value] });
  t.match(byName(answer.body.results, 'CNAME', 'mta-sts.team.example'), { ok: true, found: [MX_HOST] });
});

t.test('a DNS server that does not answer: results with detail, never a 500; the status stands', async (t) => {
  const { verify, dns, records, app, key, id } = await setup(t);
  publish(dns, records);
  t.equal((await verify()).body.status, 'verified');
  dns.silence('_agentpost.team.example');
  dns.silence('team.example');
  const answer = await verify();
  t.equal(answer.status, 200);
  t.match(byName(answer.body.results, 'TXT', '_agentpost.team.example'), {
    ok: false,
    detail: /did not answer the TXT query for _agentpost\.team\.example in time/,
  });
  t.match(byName(answer.body.results, 'MX', 'team.example'), { ok: false, detail: /did not answer the MX query/ });
  t.match(byName(answer.body.results, 'TXT', '_dmarc.team.example'), { ok: true }, 'the other checks stand alone');
  t.equal(answer.body.status, 'verified', 'a timeout says nothing about the zone');
  t.equal(answer.body.verified, true);
  t.equal((await app.api('GET', `/api/user/domains/${id}`, { key })).body.status, 'verified');
});

t.test('the daily re-check: a vanished ownership record fails the domain, and its return verifies it again', async (t) => {
  const { app, dns, records, verify, key, id } = await setup(t);
  publish(dns, records);
  await verify();
  dns.remove('_agentpost.team.example');
  const summary = await app.app.services.domainVerification.recheckAll();
  t.same(summary, { checked: 1, verified: 0, failed: 1, pending: 0 });
  const listed = await app.api('GET', '/api/user/domains', { key });
  const domain = listed.body.domains[0];
  t.equal(domain.status, 'failed');
  t.match(domain.statusReason, /ownership TXT: _agentpost\.team\.example does not exist \(NXDOMAIN\)/, 'the list says why');
  t.equal(domain.canCreateAddresses, false);
  publish(
    dns,
    records.filter((record) => record.name === '_agentpost.team.example'),
  );
  t.same(await app.app.services.domainVerification.recheckAll(), { checked: 1, verified: 1, failed: 0, pending: 0 });
  t.equal((await app.api('GET', `/api/user/domains/${id}`, { key })).body.status, 'verified');
});

t.test('a name proven by one account cannot be verified by another', async (t) => {
  const { app, dns, records, verify } = await setup(t);
  const other = await app.register();
  const otherKey = await domainKey(app, other.apiKey);
  const pending = await app.api('POST', '/api/user/domains', { key: otherKey, body: { domain: 'team.example' } });
  t.equal(pending.status, 200, 'a second pending claim is allowed: adding proves nothing');
  publish(dns, [...records, ...pending.body.records.filter((record: DnsRecordView) => record.name === '_agentpost.team.example')]);
  t.equal((await verify()).body.verified, true, 'the first holder verifies');
  const second = await app.api('POST', `/api/user/domains/${pending.body.id}/verify`, { key: otherKey });
  t.equal(second.body.verified, false);
  t.equal(second.body.statusReason, 'team.example is verified by another account');
  const third = await app.register();
  const thirdAdd = await app.api('POST', '/api/user/domains', { key: await domainKey(app, third.apiKey), body: { domain: 'Team.Example.' } });
  t.equal(thirdAdd.status, 409, 'a proven name cannot be added again');
});

t.test('names that are not acceptable are refused with 400', async (t) => {
  const { app, dns } = await startDomainApp(t);
  void dns;
  const agent = await app.register();
  const key = await domainKey(app, agent.apiKey);
  for (const domain of [
    'localhost',
    'team..example',
    '-team.example',
    'team.123',
    'agents.localhost',
    'sub.agents.localhost',
    'tëam.example',
    `${'a'.repeat(64)}.example`,
  ]) {
    const answer = await app.api('POST', '/api/user/domains', { key, body: { domain } });
    t.equal(answer.status, 400, domain);
  }
  t.equal((await app.api('POST', '/api/user/domains', { key, body: { domain: 'xn--tam-cma.example' } })).status, 200, 'an A-label is a name');
  t.equal((await app.api('POST', '/api/user/domains', { key, body: { domain: 'XN--TAM-CMA.example' } })).status, 409, 'case does not make another name');
});

t.test('the MTA-STS policy is served for verified domains only', async (t) => {
  const { app, dns, records, verify } = await setup(t);
  // fetch may not set Host (a forbidden header name), so node:http asks.
  const policy = (host: string) =>
    new Promise<{ status: number; type: string; text: string }>((resolve, reject) => {
      request(`${app.baseUrl}/.well-known/mta-sts.txt`, { headers: { host } }, (response) => {
        let text = '';
        response
          .setEncoding('utf8')
          .on('data', (chunk: string) => {
            text += chunk;
          })
          .on('end', () => resolve({ status: response.statusCode ?? 0, type: response.headers['content-type'] ?? '', text }));
      })
        .on('error', reject)
        .end();
    });
  t.equal((await policy('mta-sts.team.example')).status, 404, 'not while pending');
  publish(dns, records);
  await verify();
  const served = await policy('mta-sts.team.example');
  t.equal(served.status, 200);
  t.match(served.type, /^text\/plain/);
  t.equal(served.text, `version: STSv1\r\nmode: testing\r\nmx: ${MX_HOST}\r\nmax_age: 604800\r\n`);
  t.equal((await policy('mta-sts.agents.localhost')).status, 200, 'the mail domain has one too');
  t.equal((await policy('mta-sts.other.example')).status, 404);
  t.equal((await policy('team.example')).status, 404);
});
