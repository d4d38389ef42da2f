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
  resolveTxt: async () => {
    throw dnsError('ENODATA');
  },
});

t.test('MX hosts are tried by preference, each resolved to its addresses', async (t) => {
  const resolver = fakeResolver({
    mx: {
      'example.test': [
        { exchange: 'mx2.example.test', priority: 20 },
        { exchange: 'mx1.example.test', priority: 10 },
      ],
    },
    a: { 'mx1.example.test': ['198.51.99.1'], 'mx2.example.test': ['198.51.99.2'] },
    aaaa: { 'mx2.example.test': ['2001:4860::2'] },
  });
  const hop = await new NextHopResolver(resolver, { port: 2525, allowLoopback: false }).resolve('Example.TEST');
  t.ok(hop.ok);
  if (!hop.ok) return;
  t.same(hop.route.hosts, [
    { host: '198.51.99.1', servername: 'mx1.example.test' },
    { host: '198.51.99.2', servername: 'mx2.example.test' },
    { host: '2001:4860::2', servername: 'mx2.example.test' },
  ]);
  t.equal(hop.route.port, 2525);
  t.equal(hop.route.kind, 'mx');
});

t.test('a null MX (RFC 7505) is a definite failure 556 5.1.10', async (t) => {
  const resolver = fakeResolver({ mx: { 'nomail.test': [{ exchange: '', priority: 0 }] }, a: { 'nomail.test': ['198.51.99.9'] } });
  const hop = await new NextHopResolver(resolver, { port: 25, allowLoopback: false }).resolve('nomail.test');
  t.same(hop, {
    ok: false,
    status: 'failed',
    answer: { smtpCode: 556, enhancedCode: '5.1.10', diagnostic: '556 5.1.10 nomail.test accepts no mail (null MX, RFC 7505)' },
  });
});

t.test('no MX records: the domain A/AAAA is the implicit MX (RFC 5321 section 5.1)', async (t) => {
  const resolver = fakeResolver({ a: { 'plain.test': ['198.51.99.7'] }, aaaa: { 'plain.test': ['2001:4860::7'] } });
  const hop = await new NextHopResolver(resolver, { port: 25, allowLoopback: false }).resolve('plain.test');
  t.ok(hop.ok);
  if (hop.ok)
    t.same(
      hop.route.hosts.map((h) => h.host),
      ['198.51.99.7', '2001:4860::7'],
    );
});

t.test('a domain that does not exist fails; a DNS outage defers', async (t) => {
  const nx = await new NextHopResolver(fakeResolver({}), { port: 25, allowLoopback: false }).resolve('missing.test');
  t.match(nx, { ok: false, status: 'failed', answer: { smtpCode: 550, enhancedCode: '5.1.2' } });
  const outage = await new NextHopResolver(fakeResolver({ mx: { 'flaky.test': dnsError('ETIMEOUT') } }), { port: 25, allowLoopback: false }).resolve(
    'flaky.test',
  );
  t.match(outage, { ok: false, status: 'deferred', answer: { smtpCode: 451, enhancedCode: '4.4.3' } });
});

t.test('a configured relay takes precedence over DNS', async (t) => {
  const resolver: MxResolver = {
    resolveMx: async () => t.fail('DNS must not be asked') as never,
    resolve4: async () => ['127.0.0.1'],
    resolve6: async () => [],
    resolveTxt: async () => t.fail('DNS must not be asked') as never,
  };
  const hop = await new NextHopResolver(resolver, { port: 25, allowLoopback: false, relay: 'smtp://user%40x:p%3Ass@relay.test:2526' }).resolve('example.test');
  t.ok(hop.ok);
  if (!hop.ok) return;
  t.same(hop.route.hosts, [{ host: 'relay.test', servername: 'relay.test' }]);
  t.equal(hop.route.port, 2526);
  t.same(hop.route.auth, { user: 'user@x', pass: 'p:ss' });
  t.equal(relayRoute('smtps://relay.test').port, 465);
  t.equal(relayRoute('smtps://relay.test').secure, true);
  t.throws(() => relayRoute('http://relay.test'));
});

t.test('MX answers inside (loopback, private, link-local, metadata, mapped) are never used; a relay is trusted', async (t) => {
  const inside = ['127.0.0.1', '10.1.2.3', '172.16.0.9', '192.168.1.1', '169.254.169.254', '100.64.0.1', '0.0.0.0', '198.51.100.7'];
  const inside6 = ['::1', 'fe80::1', 'fd00::1', '::ffff:127.0.0.1', '::7f00:1', '64:ff9b::a00:1'];
  const resolver = fakeResolver({
    mx: {
      'mixed.test': [
        { exchange: 'in.mixed.test', priority: 5 },
        { exchange: 'localhost', priority: 7 },
        { exchange: 'out.mixed.test', priority: 10 },
      ],
      'inside.test': [
        { exchange: 'in.mixed.test', priority: 5 },
        { exchange: 'mx.localhost', priority: 7 },
      ],
    },
    a: {
      'in.mixed.test': inside,
      'out.mixed.test': ['198.51.99.5', '10.0.0.5'],
      localhost: ['198.51.99.6'],
      'mx.localhost': ['198.51.99.6'],
      'bare.test': ['127.0.0.1'],
    },
    aaaa: { 'in.mixed.test': inside6 },
  });
  const hops = new NextHopResolver(resolver, { port: 25, allowLoopback: false });
  const mixed = await hops.resolve('mixed.test');
  t.ok(mixed.ok);
  if (mixed.ok) t.same(mixed.route.hosts, [{ host: '198.51.99.5', servername: 'out.mixed.test' }], 'only the public answer, never a localhost name');
  t.match(await hops.resolve('inside.test'), { ok: false, status: 'failed', answer: { smtpCode: 550, enhancedCode: '5.4.4' } });
  t.match(await hops.resolve('bare.test'), { ok: false, status: 'failed', answer: { smtpCode: 550, enhancedCode: '5.4.4' } }, 'the implicit MX too');
  const local = await new NextHopResolver(resolver, { port: 25, allowLoopback: true }).resolve('bare.test');
  t.ok(local.ok, 'outbound.allowLoopbackMx admits loopback');
  const stillPrivate = await new NextHopResolver(resolver, { port: 25, allowLoopback: true }).resolve('inside.test');
  t.ok(stillPrivate.ok);
  if (stillPrivate.ok)
    t.same(
      stillPrivate.route.hosts.map((h) => h.host),
      ['127.0.0.1', '::1', '::ffff:127.0.0.1', '198.51.99.6'],
      'but nothing else inside',
    );
  const relay = await new NextHopResolver(resolver, { port: 25, allowLoopback: false, relay: 'smtp://127.0.0.1:2526' }).resolve('mixed.test');
  t.ok(relay.ok, 'a configured relay is trusted as given');
});
