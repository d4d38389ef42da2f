// The service's one resolver (node:dns Resolver with dns.servers) against a real authoritative
// DNS server on loopback: every record type the service asks for, over the wire.
import t, { type Test } from 'tap';
import { dnsErrorCode, resolveByType, reverseName, withAnswerCache } from '../src/core/dns.js';
import { resolveWebhookTarget } from '../src/core/webhook-target.js';
import { NextHopResolver } from '../src/services/delivery/next-hop.js';
import { createDnsResolver } from '../src/net/dns-resolver.js';
import { startApp } from './helpers/app.js';
import { startDnsServer } from './helpers/dns-server.js';

const rejectsWith = async (t: Test, promise: Promise<unknown>, code: string, what: string) => {
  try {
    const value = await promise;
    t.fail(`${what}: expected ${code}, got ${JSON.stringify(value)}`);
  } catch (error) {
    t.equal(dnsErrorCode(error), code, what);
  }
};

const longKey = `p=${'A'.repeat(700)}`;

t.test('each record type the service uses, answered over the wire', async (t) => {
  const server = await startDnsServer(t, {
    'mail.example.test': { A: ['192.0.2.10'], AAAA: ['2001:db8::10'] },
    'example.test': {
      MX: [{ exchange: 'mail.example.test', priority: 10 }],
      TXT: [['v=spf1 ip4:192.0.2.10', ' -all'], 'another record'],
    },
    'www.example.test': { CNAME: 'alias.example.test' },
    'alias.example.test': { CNAME: 'mail.example.test' },
    [reverseName('192.0.2.10')]: { PTR: ['mail.example.test'] },
    [reverseName('2001:db8::10')]: { PTR: ['mail.example.test'] },
    'sel._domainkey.example.test': { TXT: [`v=DKIM1; k=rsa; ${longKey}`] },
  });
  const dns = createDnsResolver({ servers: server.servers, timeoutMs: 2000, tries: 1 });

  t.same(await dns.resolve4('mail.example.test'), ['192.0.2.10']);
  t.same(await dns.resolve6('MAIL.example.test.'), ['2001:db8::10'], 'names are case-insensitive, a trailing dot is the root');
  t.same(await dns.resolveMx('example.test'), [{ exchange: 'mail.example.test', priority: 10 }]);
  const txt = await dns.resolveTxt('example.test');
  t.same(txt.map((strings) => strings.join('')).sort(), ['another record', 'v=spf1 ip4:192.0.2.10 -all'], 'several strings of one record join into it');
  t.ok(
    txt.some((strings) => strings.length === 2),
    'the character-strings arrive as sent',
  );
  t.same(await dns.resolve4('www.example.test'), ['192.0.2.10'], 'a CNAME chain is followed to the address');
  t.same(await dns.resolveCname('www.example.test'), ['alias.example.test']);
  t.same(await dns.resolvePtr(reverseName('192.0.2.10')), ['mail.example.test']);
  t.same(await dns.resolvePtr(reverseName('2001:db8::10')), ['mail.example.test']);
  const dkim = await dns.resolveTxt('sel._domainkey.example.test');
  t.equal(dkim[0].join(''), `v=DKIM1; k=rsa; ${longKey}`, 'a record longer than 255 octets arrives whole');

  const byType = resolveByType(dns);
  t.same(await byType('example.test', 'MX'), [{ exchange: 'mail.example.test', priority: 10 }], 'the dns.resolve(name, type) shape mailauth asks with');
  t.ok(server.queries.includes('MX example.test'), 'the questions reached the server');

  server.set('big.example.test', { TXT: ['x'.repeat(3000)] });
  t.equal((await dns.resolveTxt('big.example.test'))[0].join('').length, 3000, 'an answer too big for UDP comes over TCP');
  t.ok(server.tcpQueries > 0, 'after the truncated UDP answer');
});

t.test('NXDOMAIN, NODATA and a server that does not answer', async (t) => {
  const server = await startDnsServer(t, {
    'example.test': { A: ['192.0.2.1'] },
    'sel._domainkey.example.test': { TXT: ['v=DKIM1; p=abc'] },
  });
  server.silence('slow.example.test');
  const dns = createDnsResolver({ servers: server.servers, timeoutMs: 200, tries: 1 });

  await rejectsWith(t, dns.resolve4('missing.example.test'), 'ENOTFOUND', 'a name that does not exist');
  await rejectsWith(t, dns.resolveTxt('example.test'), 'ENODATA', 'a name without records of the type');
  await rejectsWith(t, dns.resolveTxt('_domainkey.example.test'), 'ENODATA', 'an empty non-terminal exists (RFC 8020)');
  await rejectsWith(t, dns.resolveTxt('slow.example.test'), 'ETIMEOUT', 'no answer is a timeout');
  await rejectsWith(t, dns.resolveAddresses('slow.example.test'), 'ETIMEOUT', 'an address lookup reports the timeout');

  server.set('later.example.test', { TXT: ['v=spf1 -all'] });
  t.same(await dns.resolveTxt('later.example.test'), [['v=spf1 -all']], 'the zone changes while the server runs');
  server.remove('later.example.test');
  await rejectsWith(t, dns.resolveTxt('later.example.test'), 'ENOTFOUND', 'and loses names');
});

t.test('addresses: both families, one family, localhost', async (t) => {
  const server = await startDnsServer(t, {
    'both.example.test': { A: ['192.0.2.1'], AAAA: ['2001:db8::1'] },
    'v6.example.test': { AAAA: ['2001:db8::2'] },
  });
  const dns = createDnsResolver({ servers: server.servers, timeoutMs: 1000, tries: 1 });
  t.same((await dns.resolveAddresses('both.example.test')).sort(), ['192.0.2.1', '2001:db8::1']);
  t.same(await dns.resolveAddresses('v6.example.test'), ['2001:db8::2']);
  await rejectsWith(t, dns.resolveAddresses('none.example.test'), 'ENOTFOUND', 'a missing name');
  t.same(await dns.resolveAddresses('localhost'), ['127.0.0.1', '::1'], 'RFC 6761: localhost never goes to DNS');
  t.same(await dns.resolveAddresses('api.localhost.'), ['127.0.0.1', '::1']);
  t.notOk(
    server.queries.some((query) => query.includes('localhost')),
    'no query for localhost names',
  );
});

t.test('direct-MX next hops and webhook targets resolve through the same resolver', async (t) => {
  const server = await startDnsServer(t, {
    'example.test': { MX: [{ exchange: 'mx.example.test', priority: 5 }] },
    'mx.example.test': { A: ['198.51.99.25'] },
    'hooks.example.test': { A: ['93.184.215.14'] },
    'inside.example.test': { A: ['10.1.2.3'] },
  });
  const dns = createDnsResolver({ servers: server.servers, timeoutMs: 1000, tries: 1 });

  const hop = await new NextHopResolver(dns, { port: 25, allowLoopback: false }).resolve('example.test');
  t.same(hop.ok && hop.route.hosts, [{ host: '198.51.99.25', servername: 'mx.example.test' }]);
  const missing = await new NextHopResolver(dns, { port: 25, allowLoopback: false }).resolve('nowhere.test');
  t.match(missing, { ok: false, status: 'failed' }, 'NXDOMAIN fails the recipient');

  const target = await resolveWebhookTarget('https://hooks.example.test/in', dns, { allowInsecure: false });
  t.equal(target.address, '93.184.215.14');
  await t.rejects(resolveWebhookTarget('https://inside.example.test/in', dns, { allowInsecure: false }), { code: 'blocked_address' });
});

t.test('reverse names (RFC 1035 section 3.5, RFC 3596 section 2.5)', async (t) => {
  t.equal(reverseName('192.0.2.10'), '10.2.0.192.in-addr.arpa');
  t.equal(reverseName('2001:db8::1'), '1.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.8.b.d.0.1.0.0.2.ip6.arpa');
  t.equal(reverseName('::ffff:192.0.2.1'), '1.0.2.0.0.0.0.c.f.f.f.f.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.0.ip6.arpa');
  t.throws(() => reverseName('example.test'));
});

t.test('the app asks the servers of dns.servers', async (t) => {
  const server = await startDnsServer(t, { 'hooks.example.test': { A: ['93.184.215.14'] } });
  const app = await startApp(t, { dns: { servers: server.servers, timeoutMs: 1000, tries: 1 } });
  const { apiKey } = await app.register();
  const created = await app.api('POST', '/api/v1/agent/webhooks', { key: apiKey, body: { url: 'https://hooks.example.test/in' } });
  t.equal(created.status, 201);
  t.ok(server.queries.includes('A hooks.example.test'), 'the webhook target check went to the configured server');
  const refused = await app.api('POST', '/api/v1/agent/webhooks', { key: (await app.register()).apiKey, body: { url: 'https://gone.example.test/in' } });
  t.equal(refused.status, 400, 'a name the server says does not exist is refused');
});

t.test('the checks reuse definite answers for their time, share a lookup in flight, and ask again after a failure', async (t) => {
  const asked: string[] = [];
  const failures = new Map<string, string>([
    ['gone.example', 'ENOTFOUND'],
    ['flaky.example', 'ESERVFAIL'],
  ]);
  const lookup = async (name: string, type: string): Promise<unknown> => {
    asked.push(`${type} ${name}`);
    const code = failures.get(name);
    if (code) throw Object.assign(new Error(`query ${code} ${name}`), { code });
    return [[`v=spf1 -all ${asked.length}`]];
  };
  let now = 0;
  const cached = withAnswerCache(lookup, { ttlMs: 30_000, maxEntries: 2, now: () => now });
  const [first, second] = await Promise.all([cached('a.example', 'TXT'), cached('A.example', 'txt')]);
  t.same(first, second, 'one answer for both, names and types compared without case');
  t.same(asked, ['TXT a.example'], 'asked once while in flight');
  now = 29_999;
  t.same(await cached('a.example', 'TXT'), first, 'reused within its time');
  now = 30_000;
  t.not(await cached('a.example', 'TXT'), first, 'asked again once its time is up');
  t.equal(asked.length, 2);
  await t.rejects(cached('gone.example', 'TXT'), { code: 'ENOTFOUND' });
  await t.rejects(cached('gone.example', 'TXT'), { code: 'ENOTFOUND' });
  t.equal(asked.filter((query) => query === 'TXT gone.example').length, 1, 'NXDOMAIN is a definite answer: kept (RFC 2308)');
  await t.rejects(cached('flaky.example', 'TXT'), { code: 'ESERVFAIL' });
  await t.rejects(cached('flaky.example', 'TXT'), { code: 'ESERVFAIL' });
  t.equal(asked.filter((query) => query === 'TXT flaky.example').length, 2, 'SERVFAIL says nothing about the name: asked again');
  asked.length = 0;
  await cached('b.example', 'TXT');
  await cached('c.example', 'TXT');
  await cached('a.example', 'TXT');
  t.same(asked, ['TXT b.example', 'TXT c.example', 'TXT a.example'], 'past maxEntries the oldest answer goes');
});
