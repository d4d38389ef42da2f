import t from 'tap';
import { resolveWebhookTarget, TargetRefused } from '../src/core/webhook-target.js';
import { startApp } from './helpers/app.js';
import { tableResolver, webhookFixture } from './helpers/webhooks.js';

const resolver = tableResolver({
  'hooks.example.com': ['93.184.216.34'],
  'v6.example.com': ['2606:2800:220:1:248:1893:25c8:1946'],
  'internal.example.com': ['10.0.0.5'],
  'metadata.example.com': ['169.254.169.254'],
  'cgnat.example.com': ['100.64.1.1'],
  'mixed.example.com': ['93.184.216.34', '127.0.0.1'],
  'ula.example.com': ['fd12:3456::1'],
  'mapped.example.com': ['::ffff:192.168.0.1'],
  'nat64.example.com': ['64:ff9b::a00:1'],
  'sixtofour.example.com': ['2002:a00:1::1'],
  'loop.example.com': ['127.0.0.1'],
});

/** Hostile callback URLs, each refused at create with allowInsecure off (the default). */
const HOSTILE = [
  'http://hooks.example.com/hook',
  'https://hooks.example.com:8443/hook',
  'https://hooks.example.com:80/hook',
  'ftp://hooks.example.com/hook',
  'https://user:pass@hooks.example.com/hook',
  'not a url',
  'https://127.0.0.1/hook',
  'https://127.1/hook',
  'https://[::1]/hook',
  'https://10.1.2.3/hook',
  'https://172.16.0.1/hook',
  'https://192.168.1.1/hook',
  'https://169.254.169.254/latest/meta-data/',
  'https://100.64.0.1/hook',
  'https://[::ffff:127.0.0.1]/hook',
  'https://[::ffff:a9fe:a9fe]/hook',
  'https://[::127.0.0.1]/hook',
  'https://[64:ff9b::a00:1]/hook',
  'https://[fe80::1]/hook',
  'https://[fd00::1]/hook',
  'https://[::]/hook',
  'https://0.0.0.0/hook',
  'https://2130706433/hook',
  'https://0x7f000001/hook',
  'https://017700000001/hook',
  'https://224.0.0.1/hook',
  'https://255.255.255.255/hook',
  'https://192.0.2.1/hook',
  'https://localhost/hook',
  'https://api.localhost/hook',
  'https://internal.example.com/hook',
  'https://metadata.example.com/hook',
  'https://cgnat.example.com/hook',
  'https://mixed.example.com/hook',
  'https://ula.example.com/hook',
  'https://mapped.example.com/hook',
  'https://nat64.example.com/hook',
  'https://sixtofour.example.com/hook',
  'https://loop.example.com/hook',
  'https://nxdomain.example.com/hook',
];

t.test('hostile callback URLs are refused at create', async (t) => {
  const { api, register } = await startApp(t, {}, { addressResolver: resolver });
  const agent = await register();
  for (const url of HOSTILE) {
    const response = await api('POST', '/api/v1/agent/webhooks', { key: agent.apiKey, body: { url } });
    t.equal(response.status, 400, url);
    t.match(response.body, { code: 'invalid_input', error: /^url refused/ }, url);
  }
  t.same((await api('GET', '/api/v1/agent/webhooks', { key: agent.apiKey })).body, { webhooks: [] });
});

t.test('public https hosts on port 443 are accepted', async (t) => {
  const { api, register } = await startApp(t, {}, { addressResolver: resolver });
  for (const url of [
    'https://hooks.example.com/hook',
    'https://HOOKS.example.com:443/a?b=c',
    'https://v6.example.com/',
    'https://93.184.216.34/hook',
    'https://[2606:4700:4700::1111]/',
  ]) {
    const agent = await register();
    const response = await api('POST', '/api/v1/agent/webhooks', { key: agent.apiKey, body: { url } });
    t.equal(response.status, 201, url);
  }
});

t.test('the target check picks the checked address and refuses changed answers', async (t) => {
  const policy = { allowInsecure: false };
  t.match(await resolveWebhookTarget('https://hooks.example.com/x', resolver, policy), { address: '93.184.216.34', family: 4 });
  t.match(await resolveWebhookTarget('https://v6.example.com/x', resolver, policy), { family: 6 });
  await t.rejects(resolveWebhookTarget('https://mixed.example.com/', resolver, policy), TargetRefused);
  const insecure = { allowInsecure: true };
  t.match(await resolveWebhookTarget('http://loop.example.com:8080/', resolver, insecure), { address: '127.0.0.1' });
  t.match(await resolveWebhookTarget('http://[::1]:8080/', resolver, insecure), { address: '::1' });
  await t.rejects(
    resolveWebhookTarget('http://internal.example.com:8080/', resolver, insecure),
    TargetRefused,
    'allowInsecure opens loopback only, not private networks',
  );
});

t.test('every attempt checks again: a name that now resolves inside is not contacted', async (t) => {
  const answers: Record<string, string[]> = {};
  const switching = { resolveAddresses: async (host: string) => answers[host] ?? [] };
  const f = await webhookFixture(t, { verified: false, resolver: switching });
  const key = f.agent.apiKey;
  const port = new URL(f.receiver.url).port;
  // allowInsecure is on in this fixture: the name resolves (only through the injected resolver) to the loopback receiver.
  answers['receiver.example.test'] = ['127.0.0.1'];
  const created = await f.api('POST', '/api/v1/agent/webhooks', { key, body: { url: `http://receiver.example.test:${port}/hook` } });
  t.equal(created.status, 201);
  f.receiver.secret = created.body.signingSecret;
  const ok = await f.api('POST', `/api/v1/agent/webhooks/${created.body.id}/verify`, { key });
  t.equal(ok.body.verified, true, 'connected to the checked address: the name exists only in the injected resolver');
  t.equal(f.receiver.received.length, 1);
  answers['receiver.example.test'] = ['10.0.0.7'];
  const refused = await f.api('POST', `/api/v1/agent/webhooks/${created.body.id}/verify`, { key });
  t.same(refused.body, { verified: false, status: 'verified', error: 'blocked_address' });
  await f.mail('now inside');
  await f.runOnce();
  t.equal(f.receiver.received.length, 1, 'no request reached anything');
  const [item] = (await f.api('GET', '/api/v1/agent/webhooks/deliveries', { key })).body.deliveries;
  t.match(item, { status: 'pending', attempts: 1, lastError: 'blocked_address' });
  answers['receiver.example.test'] = [];
  f.clock.advance(5_000);
  await f.runOnce();
  t.match((await f.api('GET', '/api/v1/agent/webhooks/deliveries', { key })).body.deliveries[0], { attempts: 2, lastError: 'dns_error' });
});
