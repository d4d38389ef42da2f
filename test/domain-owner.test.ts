import t from 'tap';
import { publish, startDomainApp } from './helpers/domains.js';
import { makeOwner } from './helpers/owners.js';

// Contract Authentication: the owner session JWT is accepted for the domain endpoints; the
// signed-in owner holds the domains, and the mailboxes made on them are its agents.
t.test('an owner adds, verifies and fills a domain with its session JWT', async (t) => {
  const { app, dns } = await startDomainApp(t);
  const owner = await makeOwner(app);
  const key = owner.token;

  const added = await app.api('POST', '/api/user/domains', { key, body: { domain: 'owned.example' } });
  t.equal(added.status, 200);
  publish(dns, added.body.records);
  const verified = await app.api('POST', `/api/user/domains/${added.body.id}/verify`, { key });
  t.equal(verified.body.verified, true, 'ownership TXT and MX make it verified');

  const unpaid = await app.api('POST', `/api/user/domains/${added.body.id}/mailboxes`, { key, body: { localPart: 'ops' } });
  t.equal(unpaid.status, 402, 'creating addresses needs paid owner access');
  t.equal(unpaid.body.code, 'payment_required');

  const me = await app.api('GET', '/api/user/me', { key });
  app.app.services.hosting.grant(me.body.address, 30);
  const box = await app.api('POST', `/api/user/domains/${added.body.id}/mailboxes`, { key, body: { localPart: 'ops' } });
  t.equal(box.status, 200);
  t.equal(box.body.email, 'ops@owned.example');
  const agents = await app.api('GET', '/api/user/agents', { key });
  t.same(
    agents.body.agents.map((agent: { email: string }) => agent.email),
    ['ops@owned.example'],
    'the new mailbox is an agent of the owner',
  );

  const other = await makeOwner(app);
  t.equal((await app.api('GET', `/api/user/domains/${added.body.id}`, { key: other.token })).status, 404, 'another owner does not see it');
  t.same((await app.api('GET', '/api/user/domains', { key: other.token })).body.domains, []);

  await app.api('DELETE', '/api/user/session', { key });
  t.equal((await app.api('GET', '/api/user/domains', { key })).status, 401, 'a signed-out session is refused');
});
