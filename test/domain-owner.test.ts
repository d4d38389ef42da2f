import { resolve } from 'node:path';
import t from 'tap';
import { addVerifiedDomain, publish, startDomainApp } from './helpers/domains.js';
import { makeOwner } from './helpers/owners.js';
import { runCommand } from './helpers/process.js';

// docs/operators/domains.md: the owner session JWT is accepted for the domain endpoints; the
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
  await app.app.services.hosting.grant(me.body.address, 30);
  const box = await app.api('POST', `/api/user/domains/${added.body.id}/mailboxes`, { key, body: { localPart: 'ops' } });
  t.equal(box.status, 200);
  t.equal(box.body.email, 'ops@owned.example');
  const agents = await app.api('GET', '/api/user/agents', { key });
  t.same(
    agents.body.agents.map((agent: { email: string }) => agent.email),
    ['ops@owned.example'],
    'the new mailbox is an agent of the owner',
  );

  // An alias may point at any agent the owner owns, a claimed one too, and not at anyone else's.
  const claimed = await app.register();
  await app.api('POST', '/api/user/agents/claim', { key, body: { apiKey: claimed.apiKey } });
  const toClaimed = await app.api('POST', `/api/user/domains/${added.body.id}/aliases`, { key, body: { localPart: 'bot', mailbox: claimed.email } });
  t.equal(toClaimed.status, 200, JSON.stringify(toClaimed.body));
  t.equal(toClaimed.body.mailbox, claimed.email);
  const stranger = await app.register();
  t.equal(
    (await app.api('POST', `/api/user/domains/${added.body.id}/aliases`, { key, body: { localPart: 'stranger', mailbox: stranger.email } })).status,
    404,
    'an agent it does not own',
  );

  const other = await makeOwner(app);
  t.equal((await app.api('GET', `/api/user/domains/${added.body.id}`, { key: other.token })).status, 404, 'another owner does not see it');
  t.same((await app.api('GET', '/api/user/domains', { key: other.token })).body.domains, []);

  await app.api('DELETE', '/api/user/session', { key });
  t.equal((await app.api('GET', '/api/user/domains', { key })).status, 401, 'a signed-out session is refused');
});

// docs/operators/payments.md: while payments are paused, the operator grants paid owner access from the command line.
t.test('`agentpost hosting grant` takes an owner login email and opens address creation', async (t) => {
  const dataDir = t.testdir({});
  const { app, dns } = await startDomainApp(t, { dataDir });
  const owner = await makeOwner(app, 'granted@example.com');
  const domain = await addVerifiedDomain(app, dns, owner.token, 'granted.example');
  t.equal(
    (
      await app.api('POST', `/api/user/domains/${domain.id}/aliases`, {
        key: owner.token,
        body: { localPart: 'a', mailbox: (await app.api('GET', '/api/user/me', { key: owner.token })).body.address },
      })
    ).status,
    402,
  );
  const bin = resolve(import.meta.dirname, '..', 'bin', 'agentpost');
  const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('AGENTPOST_')));
  const run = (...args: string[]) => runCommand(bin, [...args, '--data-dir', dataDir], { env });
  const granted = await run('hosting', 'grant', 'Granted@Example.com', '30');
  t.equal(granted.code, 0, granted.stderr);
  t.match(granted.stdout, /^hosting for \S+ active until \d{4}-\d\d-\d\dT/);
  const listed = (await app.api('GET', '/api/user/domains', { key: owner.token })).body;
  t.match(listed, { canCreateAddresses: true, hosting: { active: true } });
  t.equal((await run('hosting', 'grant', 'nobody@example.com', '30')).code, 1, 'no such owner or account');
  t.equal((await run('hosting', 'grant', 'granted@example.com', '99999')).code, 2, 'more days than any plan sells');
});
