// The console's Health page: the deployment checks of `agentpost doctor` for the mail domain
// and the owner's verified domains, against a real DNS server on loopback.
import t from 'tap';
import { consoleClient } from './helpers/console.js';
import { addVerifiedDomain, hostedHolder, startDomainApp } from './helpers/domains.js';
import { makeOwner } from './helpers/owners.js';

t.test('Health lists every check with its status and the record to publish; only for a signed-in owner', async (t) => {
  const { app } = await startDomainApp(t, { mailDomain: 'agents.test' });
  const visitor = consoleClient(app.baseUrl);
  const away = await visitor.get('/health');
  t.equal(away.status, 303, 'a visitor is sent to sign in');
  t.equal(away.location, '/sign-in');

  const owner = await makeOwner(app, 'ops@example.com', 'health page password');
  const client = consoleClient(app.baseUrl);
  await client.get('/sign-in');
  t.equal((await client.post('/sign-in', { email: owner.email, password: owner.password })).status, 303);
  const page = await client.get('/health');
  t.equal(page.status, 200);
  t.match(page.text, /<a href="\/health" aria-current="page">Health<\/a>/, 'in the navigation');
  t.match(page.text, /failing: mail may not be sent or received reliably/);
  t.match(page.text, /<span class="badge bad">fail<\/span><\/td><td>dmarc<\/td><td>agents\.test<\/td>/);
  t.match(page.text, /<code>_dmarc\.agents\.test\. IN TXT &quot;v=DMARC1; p=quarantine/, 'the record to publish, escaped');
  t.match(page.text, /<span class="badge warn">warn<\/span><\/td><td>certificate<\/td>/);
  t.notMatch(page.text, /<script/i);
});

t.test('the checks cover every verified domain besides the mail domain', async (t) => {
  const { app, dns } = await startDomainApp(t, { mailDomain: 'agents.test' });
  await hostedHolder(app, dns, 'team.example');
  const before = await app.app.services.doctor.run();
  t.ok(
    before.checks.some((check) => check.check === 'mx' && check.subject === 'team.example'),
    'the verified domain is checked',
  );
  t.ok(before.checks.some((check) => check.check === 'mx' && check.subject === 'agents.test'));
  const named = await app.app.services.doctor.run({ domains: ['agents.test'] });
  t.notOk(
    named.checks.some((check) => check.subject === 'team.example'),
    'domains named replace the default list',
  );
});

t.test("an owner's Health page checks its own verified domains and no other owner's", async (t) => {
  const { app, dns } = await startDomainApp(t, { mailDomain: 'agents.test' });
  const ada = await makeOwner(app, 'ada@example.com', 'health page password');
  const bob = await makeOwner(app, 'bob@example.com', 'health page password');
  await addVerifiedDomain(app, dns, ada.token, 'ada.example');
  await hostedHolder(app, dns, 'agent-held.example');
  const healthOf = async (owner: { email: string; password: string }) => {
    const client = consoleClient(app.baseUrl);
    await client.get('/sign-in');
    await client.post('/sign-in', { email: owner.email, password: owner.password });
    return (await client.get('/health')).text;
  };
  const adas = await healthOf(ada);
  t.match(adas, /<td>mx<\/td><td>ada\.example<\/td>/, 'her verified domain is checked');
  t.match(adas, /<td>mx<\/td><td>agents\.test<\/td>/, 'and the mail domain');
  t.notMatch(adas, /agent-held\.example/, 'a domain held by someone else is not shown');
  const bobs = await healthOf(bob);
  t.notMatch(bobs, /ada\.example/, "another owner does not learn of ada's domain");
  t.match(bobs, /<td>mx<\/td><td>agents\.test<\/td>/);
});
