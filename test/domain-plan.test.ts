import t from 'tap';
import { ManualClock } from '../src/core/clock.js';
import { addVerifiedDomain, domainKey, publish, startDomainApp } from './helpers/domains.js';

/**
 * docs/operators/domains.md: adding and checking DNS are free; creating addresses requires paid owner access;
 * the Personal plan includes one domain, 10 aliases and up to 10 separate mailboxes; extra
 * domains require active primary hosting and verified ownership.
 */

t.test('no hosting: domains are added and verified for free, addresses need paid access (402)', async (t) => {
  const { app, dns } = await startDomainApp(t);
  const agent = await app.register();
  const key = await domainKey(app, agent.apiKey);
  const domain = await addVerifiedDomain(app, dns, key, 'team.example');
  const list = await app.api('GET', '/api/user/domains', { key });
  t.match(list.body, {
    canCreateAddresses: false,
    canCreateAddressesReason: /paid hosting; payments are paused, so the operator grants it \(agentpost hosting grant <email> <days>\)/,
    limits: { domains: { used: 1, allowed: 1 }, aliases: { used: 0, allowed: 10 }, mailboxes: { used: 0, allowed: 10 } },
    hosting: { active: false, expiresAt: null },
  });
  const alias = await app.api('POST', `/api/user/domains/${domain.id}/aliases`, { key, body: { localPart: 'team', mailbox: agent.email } });
  t.equal(alias.status, 402);
  t.equal(alias.body.code, 'payment_required');
  t.match(alias.body.error, /cannot create addresses on team\.example: creating addresses needs paid hosting/);
  t.equal((await app.api('POST', `/api/user/domains/${domain.id}/mailboxes`, { key, body: { localPart: 'ops' } })).status, 402);
  const second = await app.api('POST', '/api/user/domains', { key, body: { domain: 'second.example' } });
  t.equal(second.status, 402, 'an extra domain needs active hosting');
  t.match(second.body.error, /the plan includes 1 domain\(s\); an extra domain needs active hosting/);
});

t.test('with funding not paused the reason points at the payment', async (t) => {
  const { app } = await startDomainApp(t, { funding: { paused: false } });
  const agent = await app.register();
  const list = await app.api('GET', '/api/user/domains', { key: await domainKey(app, agent.apiKey) });
  t.match(list.body.canCreateAddressesReason, /buy it with POST \/api\/v1\/agent\/payment \(kind domain_hosting\)/);
});

t.test('a grant opens address creation until it expires; a pending domain takes none', async (t) => {
  const clock = new ManualClock(new Date('2026-03-01T12:00:00Z'));
  const { app, dns } = await startDomainApp(t, {}, { clock });
  const agent = await app.register();
  const key = await domainKey(app, agent.apiKey);
  const grant = await app.app.services.hosting.grant(agent.email, 30);
  t.same(grant, { holder: agent.email, hosting: { active: true, expiresAt: '2026-03-31T12:00:00.000Z' } });
  const again = await app.app.services.hosting.extendHosting(agent.userId, 5, { source: 'payment', reference: 'pay_test' });
  t.equal(again.expiresAt, '2026-04-05T12:00:00.000Z', 'an extension adds to the current end');
  t.same(
    (await app.app.store.hosting.events(agent.userId)).map((event) => [event.source, event.days, event.reference]),
    [
      ['grant', 30, 'operator'],
      ['payment', 5, 'pay_test'],
    ],
  );
  const added = await app.api('POST', '/api/user/domains', { key, body: { domain: 'team.example' } });
  const pending = await app.api('POST', `/api/user/domains/${added.body.id}/aliases`, { key, body: { localPart: 'team', mailbox: agent.email } });
  t.equal(pending.status, 409);
  t.match(pending.body.error, /team\.example is not verified yet: publish its records, then POST \/api\/user\/domains\/.*\/verify/);
  t.match((await app.api('GET', '/api/user/domains', { key })).body, { canCreateAddresses: false, canCreateAddressesReason: /not verified yet/ });
  publish(dns, added.body.records);
  await app.api('POST', `/api/user/domains/${added.body.id}/verify`, { key });
  t.match((await app.api('GET', '/api/user/domains', { key })).body, {
    canCreateAddresses: true,
    hosting: { active: true, expiresAt: '2026-04-05T12:00:00.000Z' },
  });
  t.notOk('canCreateAddressesReason' in (await app.api('GET', '/api/user/domains', { key })).body);
  t.equal((await app.api('POST', `/api/user/domains/${added.body.id}/aliases`, { key, body: { localPart: 'team', mailbox: agent.email } })).status, 200);
  clock.set(new Date('2026-04-05T12:00:00Z'));
  t.match((await app.api('GET', '/api/user/domains', { key })).body, { canCreateAddresses: false, hosting: { active: false } });
  t.equal((await app.api('POST', `/api/user/domains/${added.body.id}/aliases`, { key, body: { localPart: 'late', mailbox: agent.email } })).status, 402);
  await t.rejects(() => app.app.services.hosting.grant(agent.email, 0), { code: 'invalid_input' });
  await t.rejects(() => app.app.services.hosting.grant('nobody@agents.localhost', 3), { code: 'not_found' });
});

t.test('the 11th alias and the 11th mailbox answer 409 with a clear message', async (t) => {
  const { app, dns } = await startDomainApp(t);
  const agent = await app.register();
  await app.app.services.hosting.grant(agent.email, 30);
  const key = await domainKey(app, agent.apiKey);
  const domain = await addVerifiedDomain(app, dns, key, 'team.example');
  for (let n = 1; n <= 10; n += 1) {
    t.equal((await app.api('POST', `/api/user/domains/${domain.id}/aliases`, { key, body: { localPart: `a${n}`, mailbox: agent.email } })).status, 200);
    t.equal((await app.api('POST', `/api/user/domains/${domain.id}/mailboxes`, { key, body: { localPart: `m${n}` } })).status, 200);
  }
  const alias = await app.api('POST', `/api/user/domains/${domain.id}/aliases`, { key, body: { localPart: 'a11', mailbox: agent.email } });
  t.equal(alias.status, 409);
  t.equal(alias.body.error, 'the plan includes 10 aliases and 10 are in use; delete one to add another');
  const mailbox = await app.api('POST', `/api/user/domains/${domain.id}/mailboxes`, { key, body: { localPart: 'm11' } });
  t.equal(mailbox.status, 409);
  t.equal(mailbox.body.error, 'the plan includes 10 separate mailboxes and 10 are in use; delete one to add another');
  t.match((await app.api('GET', '/api/user/domains', { key })).body.limits, { aliases: { used: 10, allowed: 10 }, mailboxes: { used: 10, allowed: 10 } });
  const first = (await app.api('GET', `/api/user/domains/${domain.id}/aliases`, { key })).body.aliases[0];
  t.equal((await app.api('DELETE', `/api/user/domains/${domain.id}/aliases/${first.id}`, { key })).status, 200);
  t.equal(
    (await app.api('POST', `/api/user/domains/${domain.id}/aliases`, { key, body: { localPart: 'a11', mailbox: agent.email } })).status,
    200,
    'room again after a delete',
  );
});

t.test('the plan numbers come from config', async (t) => {
  const { app, dns } = await startDomainApp(t, { limits: { personalPlan: { domains: 1, aliases: 2, mailboxes: 0 } } });
  const agent = await app.register();
  await app.app.services.hosting.grant(agent.email, 30);
  const key = await domainKey(app, agent.apiKey);
  const domain = await addVerifiedDomain(app, dns, key, 'team.example');
  t.match((await app.api('GET', '/api/user/domains', { key })).body.limits, { aliases: { allowed: 2 }, mailboxes: { allowed: 0 } });
  t.equal((await app.api('POST', `/api/user/domains/${domain.id}/mailboxes`, { key, body: { localPart: 'm' } })).status, 409);
});

t.test('extra domains: active hosting and a verified first domain, then an add-on for its addresses', async (t) => {
  const { app, dns } = await startDomainApp(t);
  const agent = await app.register();
  const key = await domainKey(app, agent.apiKey);
  await app.app.services.hosting.grant(agent.email, 30);
  const first = await app.api('POST', '/api/user/domains', { key, body: { domain: 'first.example' } });
  const early = await app.api('POST', '/api/user/domains', { key, body: { domain: 'second.example' } });
  t.equal(early.status, 409);
  t.equal(early.body.error, 'an extra domain needs your first domain, first.example, verified first');
  publish(dns, first.body.records);
  await app.api('POST', `/api/user/domains/${first.body.id}/verify`, { key });
  const second = await addVerifiedDomain(app, dns, key, 'second.example');
  const list = await app.api('GET', '/api/user/domains', { key });
  t.match(list.body.limits.domains, { used: 2, allowed: 1 });
  t.match(list.body.domains[1], {
    domain: 'second.example',
    canCreateAddresses: false,
    canCreateAddressesReason: /second\.example is an extra domain and needs a domain add-on/,
  });
  t.equal(list.body.domains[0].canCreateAddresses, true);
  const refused = await app.api('POST', `/api/user/domains/${second.id}/aliases`, { key, body: { localPart: 'x', mailbox: agent.email } });
  t.equal(refused.status, 402);
  await app.app.services.hosting.extendAddon(second.id, 30, { source: 'grant', reference: 'test' });
  t.match((await app.api('GET', '/api/user/domains', { key })).body.limits.domains, { used: 2, allowed: 2 });
  t.equal((await app.api('POST', `/api/user/domains/${second.id}/aliases`, { key, body: { localPart: 'x', mailbox: agent.email } })).status, 200);
});

t.test('an alias names a mailbox the holder manages, an address that is free, and a valid local part', async (t) => {
  const { app, dns } = await startDomainApp(t);
  const agent = await app.register();
  const stranger = await app.register();
  await app.app.services.hosting.grant(agent.email, 30);
  const key = await domainKey(app, agent.apiKey);
  const domain = await addVerifiedDomain(app, dns, key, 'team.example');
  const post = (body: object) => app.api('POST', `/api/user/domains/${domain.id}/aliases`, { key, body });
  const box = await app.api('POST', `/api/user/domains/${domain.id}/mailboxes`, { key, body: { localPart: 'ops', agentId: 'ops-bot' } });
  t.match(box.body, { email: 'ops@team.example', agentId: 'ops-bot', apiKey: /^svc_[0-9a-f]{64}$/ });
  t.match(
    (await post({ localPart: 'Help', mailbox: 'OPS@team.example' })).body,
    { address: 'help@team.example', mailbox: 'ops@team.example' },
    'to a domain mailbox, case-insensitively',
  );
  t.equal((await post({ localPart: 'x', mailbox: stranger.email })).status, 404, "another account's mailbox is not the holder's to point at");
  t.equal((await post({ localPart: 'help', mailbox: agent.email })).status, 409, 'an alias address is taken once');
  t.equal((await post({ localPart: 'ops', mailbox: agent.email })).status, 409, 'a mailbox address is not an alias too');
  t.equal((await app.api('POST', `/api/user/domains/${domain.id}/mailboxes`, { key, body: { localPart: 'help' } })).status, 409, 'nor the other way');
  for (const localPart of ['a b', 'a..b', '.a', 'a@b', 'a'.repeat(65)]) t.equal((await post({ localPart, mailbox: agent.email })).status, 400, localPart);
  const mailboxes = await app.api('GET', `/api/user/domains/${domain.id}/mailboxes`, { key });
  t.same(
    mailboxes.body.mailboxes.map((entry: any) => [entry.email, 'apiKey' in entry]),
    [['ops@team.example', false]],
    'the key is shown once',
  );
});
