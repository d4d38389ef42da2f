import { Resolver } from 'node:dns/promises';
import { dkimVerify } from 'mailauth/lib/dkim/verify.js';
import t from 'tap';
import { hostedHolder, startDomainApp } from './helpers/domains.js';
import { startSink } from './helpers/sink.js';

// Issue: outgoing mail from a verified domain is DKIM-signed with that domain's key; mail from
// mailDomain keeps the service key. Checked on the receiving side by mailauth, an independent
// verifier, which fetches the public keys over DNS from the same loopback server the domain's
// records were published to (RFC 6376 section 6.1.2).
t.test("mail from a verified domain verifies with the domain's published key; mail from mailDomain with the service key", async (t) => {
  const sink = await startSink(t);
  const { app, dns } = await startDomainApp(t, { outbound: { relay: `smtp://127.0.0.1:${sink.port}`, timeoutMs: 5000 } });
  const service = await app.app.services.dkim.generate('agents.localhost');
  dns.set(service.recordName, { TXT: [service.recordValue] });
  const { holder, key, domain } = await hostedHolder(app, dns, 'team.example');
  await app.app.services.accounts.addCredits(holder.email, 10);
  await app.api('POST', `/api/user/domains/${domain.id}/aliases`, { key, body: { localPart: 'support', mailbox: holder.email } });
  const send = async (from: string, subject: string) => {
    const sent = await app.api('POST', '/api/v1/agent/send', { key: holder.apiKey, body: { from, to: 'ok@remote.test', subject, text: 'Signed text.' } });
    t.equal(sent.status, 200, JSON.stringify(sent.body));
  };
  await send('support@team.example', 'from the domain');
  await send(holder.email, 'from the mail domain');
  await app.app.queues.delivery.runOnce();
  await sink.waitFor(2);

  const resolver = new Resolver({ timeout: 1000, tries: 1 });
  resolver.setServers(dns.servers);
  const verify = async (raw: Buffer | string) =>
    (await dkimVerify(raw, { resolver: (name: string, type: string) => resolver.resolve(name, type as 'TXT') as Promise<never> })).results;
  const bySubject = (subject: string) => sink.messages.find((message) => message.raw.toString().includes(`Subject: ${subject}`))?.raw as Buffer;

  const domainSelector = domain.records.find((record) => record.name.endsWith('._domainkey.team.example'))?.name.split('.')[0];
  const fromDomain = await verify(bySubject('from the domain'));
  t.equal(fromDomain.length, 1, 'one signature');
  t.match(fromDomain[0], { signingDomain: 'team.example', selector: domainSelector, status: { result: 'pass', aligned: 'team.example' } });
  const fromService = await verify(bySubject('from the mail domain'));
  t.match(fromService[0], { signingDomain: 'agents.localhost', selector: service.selector, status: { result: 'pass' } });

  const tampered = bySubject('from the domain').toString().replace('Signed text.', 'Changed text.');
  t.match((await verify(tampered))[0], { signingDomain: 'team.example', status: { result: 'neutral' } }, 'a changed body fails the body hash');
  // The domain's key record gone: the signature can no longer be checked (mailauth: neutral, no key).
  dns.remove(`${domainSelector}._domainkey.team.example`);
  t.match((await verify(bySubject('from the domain')))[0], { status: { result: 'neutral', comment: /no key/ } });
});
