// The console's Domains pages: the list with each domain's state and why it takes no
// addresses, the records with each check's result, Verify, aliases and mailboxes with their
// forms (a mailbox delete asks the 2FA code when on), the plan's counts.
import t, { type Test } from 'tap';
import { ManualClock } from '../src/core/clock.js';
import { type ConsoleClient, signedInConsole } from './helpers/console.js';
import { publish, startDomainApp, type DnsRecordView } from './helpers/domains.js';
import { totpFromUrl } from './helpers/keys.js';
import { makeOwner, type TestOwner } from './helpers/owners.js';
import type { TestApp } from './helpers/app.js';
import type { TestDnsServer } from './helpers/dns-server.js';

/** The record row of a name and type on the domain page, as text without tags. */
const rowOf = (page: string, type: string, name: string): string => {
  const row = page.split('<tr>').find((candidate) => candidate.startsWith(`<td class="wide">${type} <code>${name}</code>`)) ?? '';
  return row.replace(/<[^>]+>/g, ' ').replace(/\s+/g, ' ');
};

/** Adds a domain through the console's form; answers its id and records (read over REST). */
const addThroughConsole = async (t: Test, app: TestApp, owner: TestOwner, client: ConsoleClient, domain: string) => {
  await client.get('/domains');
  const added = await client.post('/domains', { domain });
  t.equal(added.status, 303);
  const id = /^\/domains\/([0-9a-f-]{36})$/.exec(added.location ?? '')?.[1] as string;
  t.ok(id, `redirected to the domain's page: ${added.location}`);
  const records = (await app.api('GET', `/api/user/domains/${id}`, { key: owner.token })).body.records as DnsRecordView[];
  return { id, records };
};

/** An operator grant for the owner's account (`agentpost hosting grant`), found by its mailbox address. */
const grantHosting = async (app: TestApp, owner: TestOwner): Promise<void> => {
  await app.app.services.hosting.grant((await app.api('GET', '/api/user/me', { key: owner.token })).body.address, 30);
};

const setUp = async (t: Test, clock?: ManualClock) => {
  const { app, dns } = await startDomainApp(t, {}, clock ? { clock } : {});
  const owner = await makeOwner(app, 'domains@example.com');
  return { app, dns, owner, client: await signedInConsole(app.baseUrl, owner) };
};

const verified = async (t: Test, app: TestApp, dns: TestDnsServer, owner: TestOwner, client: ConsoleClient, domain: string) => {
  const { id, records } = await addThroughConsole(t, app, owner, client, domain);
  publish(dns, records);
  await client.get(`/domains/${id}`);
  const answer = await client.post(`/domains/${id}/verify`);
  t.equal(answer.status, 200);
  t.match(answer.text, /Verified: the ownership record and the MX are in place/);
  return { id, records };
};

t.test('the list and a new domain: state, why it takes no addresses, the records unchecked, the plan', async (t) => {
  const { app, owner, client } = await setUp(t);
  const list = await client.get('/domains');
  t.equal(list.status, 200);
  t.match(list.text, /<a href="\/domains" aria-current="page">Domains<\/a>/, 'in the navigation, current');
  t.match(list.text, /No domains yet/);
  t.match(list.headers.get('content-security-policy'), /default-src 'none'/);
  t.notMatch(list.text, /<script/i);

  const { id } = await addThroughConsole(t, app, owner, client, 'Team.Example');
  const page = await client.get(`/domains/${id}`);
  t.equal(page.status, 200);
  t.match(page.text, /<h1>team\.example<\/h1>/);
  t.match(page.text, /<span class="badge info">pending<\/span> not checked yet/);
  t.match(page.text, /<span class="badge bad">no<\/span> creating addresses needs paid hosting; payments are paused/, 'hosting not active, said first');
  for (const [type, name] of [
    ['TXT', '_agentpost.team.example'],
    ['MX', 'team.example'],
    ['TXT', '_mta-sts.team.example'],
    ['CNAME', 'mta-sts.team.example'],
    ['TXT', '_smtp._tls.team.example'],
  ]) {
    t.match(rowOf(page.text, type, name), /unchecked/, `${type} ${name} listed, not checked yet`);
  }
  t.match(page.text, /<dt>Domains<\/dt><dd>1 of 1<\/dd><dt>Aliases<\/dt><dd>0 of 10<\/dd><dt>Mailboxes<\/dt><dd>0 of 10<\/dd>/);
  t.match((await client.get('/domains')).text, new RegExp(`<a href="/domains/${id}">team\\.example</a>`));

  await client.get('/domains');
  const again = await client.post('/domains', { domain: 'team.example' });
  t.equal(again.status, 409);
  t.match(again.text, /team\.example is already one of your domains/);
  const bad = await client.post('/domains', { domain: '<b>not a domain</b>' });
  t.equal(bad.status, 400);
  t.match(bad.text, /&quot;&lt;b&gt;not a domain&lt;\/b&gt;&quot; is not a domain name/, 'the input comes back escaped');
  t.equal((await client.post('/domains', { domain: 'x.example', _csrf: 'forged' })).status, 403, 'the form token is checked');
});

t.test('verify: each check with its result; not verified says why; verified with hosting takes addresses', async (t) => {
  const { app, dns, owner, client } = await setUp(t);
  const { id, records } = await addThroughConsole(t, app, owner, client, 'team.example');
  publish(
    dns,
    records.filter((record) => record.type !== 'MX'),
  );
  dns.set('team.example', {
    MX: [{ priority: 5, exchange: 'mx.elsewhere.example' }],
    TXT: [records.find((r) => r.name === 'team.example' && r.type === 'TXT')?.value as string],
  });
  await client.get(`/domains/${id}`);
  const failing = await client.post(`/domains/${id}/verify`);
  t.equal(failing.status, 200);
  t.match(failing.text, /Not verified: MX: /);
  t.match(rowOf(failing.text, 'MX', 'team.example'), /failing .* Found: 5 mx\.elsewhere\.example/);
  t.match(rowOf(failing.text, 'TXT', '_agentpost.team.example'), / ok /);

  publish(dns, records);
  await client.get(`/domains/${id}`);
  t.match((await client.post(`/domains/${id}/verify`)).text, /Verified/);
  const page = await client.get(`/domains/${id}`);
  t.match(page.text, /<span class="badge good">verified<\/span>/);
  t.match(page.text, /<dt>New addresses<\/dt><dd><span class="badge bad">no<\/span> creating addresses needs paid hosting/);
  await grantHosting(app, owner);
  const hosted = await client.get(`/domains/${id}`);
  t.match(hosted.text, /<dt>New addresses<\/dt><dd><span class="badge good">yes<\/span>/);
  t.match(hosted.text, /<dt>Hosting<\/dt><dd><span class="badge good">active<\/span> until/);
});

t.test('aliases and mailboxes: created and deleted through the forms; the key shown once; the plan counts', async (t) => {
  const clock = new ManualClock(new Date('2026-05-01T00:00:00Z'));
  const { app, dns, owner, client } = await setUp(t, clock);
  const { id } = await verified(t, app, dns, owner, client, 'team.example');
  await grantHosting(app, owner);
  const me = (await app.api('GET', '/api/user/me', { key: owner.token })).body;

  await client.get(`/domains/${id}`);
  const made = await client.post(`/domains/${id}/mailboxes`, { localPart: 'ops', agentId: 'ops-bot' });
  t.equal(made.status, 200);
  const apiKey = /<code class="secret">(svc_[0-9a-f]+)<\/code>/.exec(made.text)?.[1] as string;
  t.ok(apiKey, 'the full key is shown once');
  t.equal((await app.api('GET', '/api/v1/agent/inbox', { key: apiKey })).status, 200, 'and works');
  const page = await client.get(`/domains/${id}`);
  t.notMatch(page.text, /svc_[0-9a-f]{16}/, 'never again');
  t.match(page.text, /Mailboxes \(1 of 10 in your plan\)/);
  t.match(page.text, /ops@team\.example<\/a><\/td><td>ops-bot<\/td>/);
  t.match(page.text, new RegExp(`<option>${me.address}</option><option>ops@team\\.example</option>`), 'alias targets: the owner and its agents');

  t.equal((await client.post(`/domains/${id}/aliases`, { localPart: 'help', mailbox: 'ops@team.example' })).status, 303);
  t.equal((await client.post(`/domains/${id}/aliases`, { localPart: 'me', mailbox: me.address })).status, 303);
  const withAliases = await client.get(`/domains/${id}`);
  t.match(withAliases.text, /Aliases \(2 of 10 in your plan\)/);
  t.match(withAliases.text, /<td>help@team\.example<\/td><td>ops@team\.example<\/td>/);
  const taken = await client.post(`/domains/${id}/aliases`, { localPart: 'help', mailbox: me.address });
  t.equal(taken.status, 409);
  t.match(taken.text, /help@team\.example is/);
  const aliasId = (await app.api('GET', `/api/user/domains/${id}/aliases`, { key: owner.token })).body.aliases.find(
    (a: { address: string }) => a.address === 'me@team.example',
  ).id;
  t.equal((await client.post(`/domains/${id}/aliases/${aliasId}/delete`)).status, 303);
  t.notMatch((await client.get(`/domains/${id}`)).text, /me@team\.example/);

  // Two-factor on: deleting a mailbox asks the code.
  const enrolled = await app.api('POST', '/api/user/2fa', { key: owner.token, body: { action: 'enroll' } });
  const totp = totpFromUrl(enrolled.body.otpauthUrl);
  await app.api('POST', '/api/user/2fa', { key: owner.token, body: { action: 'confirm', factorCode: totp.generate({ timestamp: clock.now().getTime() }) } });
  const asking = await client.get(`/domains/${id}`);
  t.match(asking.text, /mailboxes\/[0-9a-f-]{36}\/delete" class="row"><input type="hidden" name="_csrf" value="[^"]+"><input type="text" name="factorCode"/);
  const mailboxId = /mailboxes\/([0-9a-f-]{36})\/delete/.exec(asking.text)?.[1] as string;
  const without = await client.post(`/domains/${id}/mailboxes/${mailboxId}/delete`);
  t.equal(without.status, 403);
  t.match(without.text, /factorCode is required: two-factor is on/);
  clock.advance(30_000);
  const deleted = await client.post(`/domains/${id}/mailboxes/${mailboxId}/delete`, { factorCode: totp.generate({ timestamp: clock.now().getTime() }) });
  t.equal(deleted.status, 200);
  t.match(deleted.text, /ops@team\.example is deleted: it receives nothing, its keys are revoked, and its mail is kept until 2026-05-31T00:00:30\.000Z/);
  t.match(deleted.text, /Mailboxes \(0 of 10 in your plan\)/);
  t.match(deleted.text, /Aliases \(0 of 10 in your plan\)/, 'its alias went with it');
});

t.test('the ownership record gone since the daily re-check: the list and page say why; a domain with mailboxes is not deleted', async (t) => {
  const { app, dns, owner, client } = await setUp(t);
  const { id } = await verified(t, app, dns, owner, client, 'team.example');
  await grantHosting(app, owner);
  await client.get(`/domains/${id}`);
  t.equal((await client.post(`/domains/${id}/mailboxes`, { localPart: 'ops' })).status, 200);
  dns.remove('_agentpost.team.example');
  await app.app.services.domainVerification.recheckAll();
  const list = await client.get('/domains');
  t.match(
    list.text,
    /<span class="badge bad">failed<\/span><br><span class="muted">ownership TXT: _agentpost\.team\.example does not exist \(NXDOMAIN\)<\/span>/,
  );
  t.match(
    list.text,
    /<span class="badge bad">no<\/span> team\.example no longer shows ownership \(ownership TXT: .*\): existing addresses keep working; new ones need the records back and a verify <span class="muted">\(since the check at <time/,
  );
  const page = await client.get(`/domains/${id}`);
  t.match(rowOf(page.text, 'TXT', '_agentpost.team.example'), /failing .*NXDOMAIN/);
  const refused = await client.post(`/domains/${id}/aliases`, { localPart: 'new', mailbox: 'ops@team.example' });
  t.equal(refused.status, 409);
  t.match(refused.text, /cannot create addresses on team\.example/);

  await client.get(`/domains/${id}`);
  const kept = await client.post(`/domains/${id}/delete`);
  t.equal(kept.status, 409);
  t.match(kept.text, /still has 1 mailbox\(es\); delete them first/);
  const mailboxId = /mailboxes\/([0-9a-f-]{36})\/delete/.exec(kept.text)?.[1] as string;
  t.equal((await client.post(`/domains/${id}/mailboxes/${mailboxId}/delete`)).status, 200);
  const gone = await client.post(`/domains/${id}/delete`);
  t.equal(gone.status, 303);
  t.equal(gone.location, '/domains');
  t.match((await client.get('/domains')).text, /No domains yet/);
  t.equal((await client.get(`/domains/${id}`)).status, 404);
});
