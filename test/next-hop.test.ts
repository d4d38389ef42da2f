import t from 'tap';
import type { MxResolver } from '../src/core/outbound.js';
import { NextHopResolver, relayRoute } from '../src/services/delivery/next-hop.js';

const dnsError = (code: string) => Object.assign(new Error(code), { code });

/** A fake DNS zone: name -> records; a missing name answers ENOTFOUND, a listed empty one ENODATA. */
const fakeResolver = (zone: {
  mx?: Record<string, { exchange: string; priority: number }[] | Error>;
  a?: Record<string, string[]>;
  aaaa?: Record<string, string[]>;
}): MxResolver => ({
  resolveMx: async (name) => {
    const records = zone.mx?.[name];
    if (records instanceof Error) throw records;
    if (records === undefined) throw dnsError(zone.a?.[name] || zone.aaaa?.[name] ? 'ENODATA' : 'ENOTFOUND');
    return records;
  },
  resolve4: async (name) => {
    const list = zone.a?.[name];
    if (!list || list.length === 0) throw dnsError('ENODATA');
    return list;
  },
  resolve6: async (name) => {
    const list = zone.aaaa?.[name];
    if (!list || list.length === 0) throw dnsError('ENODATA');
    return list;
  },
});

t.test('MX hosts are tried by preference, each resolved to its addresses', async (t) => {
  const resolver = fakeResolver({
    mx: { 'example.test': [{ exchange: 'mx2.example.test', priority: 20 }, { exchange: 'mx1.example.test', priority: 10 }] },
    a: { 'mx1.example.test': ['192.0.2.1'], 'mx2.example.test': ['192.0.2.2'] },
    aaaa: { 'mx2.example.test': ['2001:db8::2'] },
  });
  const hop = await new NextHopResolver(resolver, { port: 2525 }).resolve('Example.TEST');
  t.ok(hop.ok);
  if (!hop.ok) return;
  t.same(hop.route.hosts, [
    { host: '192.0.2.1', servername: 'mx1.example.test' },
    { host: '192.0.2.2', servername: 'mx2.example.test' },
    { host: '2001:db8::2', servername: 'mx2.example.test' },
  ]);
  t.equal(hop.route.port, 2525);
  t.equal(hop.route.kind, 'mx');
});

t.test('a null MX (RFC 7505) is a definite failure 556 5.1.10', async (t) => {
  const resolver = fakeResolver({ mx: { 'nomail.test': [{ exchange: '', priority: 0 }] }, a: { 'nomail.test': ['192.0.2.9'] } });
  const hop = await new NextHopResolver(resolver, { port: 25 }).resolve('nomail.test');
  t.same(hop, { ok: false, status: 'failed', answer: { smtpCode: 556, enhancedCode: '5.1.10', diagnostic: '556 5.1.10 nomail.test accepts no mail (null MX, RFC 7505)' } });
});

t.test('no MX records: the domain A/AAAA is the implicit MX (RFC 5321 section 5.1)', async (t) => {
  const resolver = fakeResolver({ a: { 'plain.test': ['192.0.2.7'] }, aaaa: { 'plain.test': ['2001:db8::7'] } });
  const hop = await new NextHopResolver(resolver, { port: 25 }).resolve('plain.test');
  t.ok(hop.ok);
  if (hop.ok) t.same(hop.route.hosts.map((h) => h.host), ['192.0.2.7', '2001:db8::7']);
});

t.test('a domain that does not exist fails; a DNS outage defers', async (t) => {
  const nx = await new NextHopResolver(fakeResolver({}), { port: 25 }).resolve('missing.test');
  t.match(nx, { ok: false, status: 'failed', answer: { smtpCode: 550, enhancedCode: '5.1.2' } });
  const outage = await new NextHopResolver(fakeResolver({ mx: { 'flaky.test': dnsError('ETIMEOUT') } }), { port: 25 }).resolve('flaky.test');
  t.match(outage, { ok: false, status: 'deferred', answer: { smtpCode: 451, enhancedCode: '4.4.3' } });
});

t.test('a configured relay takes precedence over DNS', async (t) => {
  const resolver: MxResolver = {
    resolveMx: async () => t.fail('DNS must not be asked') as never,
    resolve4: async () => [],
    resolve6: async () => [],
  };
  const hop = await new NextHopResolver(resolver, { port: 25, relay: 'smtp://user%40x:p%3Ass@relay.test:2526' }).resolve('example.test');
  t.ok(hop.ok);
  if (!hop.ok) return;
  t.same(hop.route.hosts, [{ host: 'relay.test', servername: 'relay.test' }]);
  t.equal(hop.route.port, 2526);
  t.same(hop.route.auth, { user: 'user@x', pass: 'p:ss' });
  t.equal(relayRoute('smtps://relay.test').port, 465);
  t.equal(relayRoute('smtps://relay.test').secure, true);
  t.throws(() => relayRoute('http://relay.test'));
});
