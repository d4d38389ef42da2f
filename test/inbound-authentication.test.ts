// Every received message gets SPF, DKIM, DMARC and ARC verdicts, judged against records a real
// DNS server on loopback serves, stored with the message and shown in REST and MCP reads.
import { generateKeyPairSync } from 'node:crypto';
import { dkimSign, sealMessage } from 'mailauth';
import nodemailer from 'nodemailer';
import t from 'tap';
import { funded } from './helpers/agents.js';
import { startApp, type TestApp } from './helpers/app.js';
import type { TestDnsServer } from './helpers/dns-server.js';
import { storedRaw } from './helpers/mail.js';
import { callTool, mcpClient } from './helpers/mcp.js';
import { smtpSend, smtpSendRaw, submissionTransport } from './helpers/smtp.js';

const HOST = 'mx.here.test';

/** An RSA key and its DKIM TXT record (longer than 255 octets: the server splits it into strings). */
const dkimKey = () => {
  const { privateKey, publicKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  return {
    pem: privateKey.export({ type: 'pkcs8', format: 'pem' }) as string,
    record: `v=DKIM1; k=rsa; p=${publicKey.export({ type: 'spki', format: 'der' }).toString('base64')}`,
  };
};

/** sender.test: SPF allows loopback, DKIM selector s1, DMARC p=reject. */
const publishSender = (dns: TestDnsServer, domain: string, key: { record: string }) => {
  dns.set(domain, { TXT: ['v=spf1 ip4:127.0.0.1 ip6:::1 -all'] });
  dns.set(`s1._domainkey.${domain}`, { TXT: [key.record] });
  dns.set(`_dmarc.${domain}`, { TXT: [['v=DMARC1; ', 'p=reject; adkim=r']] });
};

const firstMessage = async (app: TestApp, apiKey: string) => {
  const list = await app.api('GET', '/api/v1/agent/inbox', { key: apiKey });
  const full = await app.api('GET', `/api/v1/agent/email/${list.body.emails[0].id}`, { key: apiKey });
  return { listed: list.body.emails[0], full: full.body };
};

t.test('signed mail from an authorized server is verified; REST, MCP and the stored header agree', async (t) => {
  const app = await startApp(t, { smtp: { hostname: HOST } });
  const dns = app.dns as TestDnsServer;
  const key = dkimKey();
  publishSender(dns, 'sender.test', key);
  const { email, apiKey } = await app.register();
  const transport = nodemailer.createTransport({
    host: '127.0.0.1',
    port: app.smtpPort,
    secure: false,
    ignoreTLS: true,
    dkim: { domainName: 'sender.test', keySelector: 's1', privateKey: key.pem },
  });
  await transport.sendMail({ from: 'Ada <ada@sender.test>', to: email, subject: 'signed', text: 'hello', envelope: { from: 'ada@sender.test', to: [email] } });
  transport.close();

  const { listed, full } = await firstMessage(app, apiKey);
  const expected = { spf: 'pass', dkim: 'pass', dmarc: 'pass', arc: 'none' };
  t.equal(listed.trust, 'verified');
  t.match(listed.authentication, { ...expected, reason: /sender\.test is authenticated/ });
  t.equal(full.trust, 'verified');
  t.match(full.authentication, expected);

  const client = await mcpClient(t, app.baseUrl, { key: apiKey });
  const read = await callTool(client, 'get_email', { id: listed.id });
  t.same(
    { trust: read.body.trust, authentication: read.body.authentication },
    { trust: full.trust, authentication: full.authentication },
    'MCP shows what REST shows',
  );

  const raw = (await storedRaw(app.app, email, listed.id)).toString();
  t.match(
    raw,
    /^Received: [\s\S]*?\r\nAuthentication-Results: mx\.here\.test;\r\n\tdkim=pass header\.i=@sender\.test header\.s=s1[^\r]*;\r\n\tspf=pass [^\r]*smtp\.mailfrom=ada@sender\.test[^\r]*;\r\n\tarc=none;\r\n\tdmarc=pass [^\r]*header\.from=sender\.test[^\r]*\r\nDKIM-Signature: /,
    'our Authentication-Results field (RFC 8601) follows our Received field, above the message as sent',
  );
  t.ok(dns.queries.includes('TXT s1._domainkey.sender.test') && dns.queries.includes('TXT _dmarc.sender.test'), 'the lookups went to dns.servers');
});

t.test('a forged From fails DMARC; fields claiming to be ours are removed, others kept', async (t) => {
  const app = await startApp(t, { smtp: { hostname: HOST } });
  const dns = app.dns as TestDnsServer;
  dns.set('bank.test', { TXT: ['v=spf1 ip4:192.0.2.1 -all'] });
  dns.set('_dmarc.bank.test', { TXT: ['v=DMARC1; p=reject'] });
  const { email, apiKey } = await app.register();
  const raw = [
    'Authentication-Results: mx.here.test; dmarc=pass header.from=bank.test',
    'Authentication-Results: (forged) MX.Here.Test;',
    '\tspf=pass smtp.mailfrom=ceo@bank.test',
    'Authentication-Results: relay.other.test; spf=pass smtp.mailfrom=ceo@bank.test',
    'From: CEO <ceo@bank.test>',
    `To: ${email}`,
    'Subject: wire the money',
    'Message-ID: <forged@bank.test>',
    '',
    'now',
    '',
  ].join('\r\n');
  await smtpSendRaw(app.smtpPort, 'ceo@bank.test', [email], raw);

  const { full } = await firstMessage(app, apiKey);
  t.equal(full.trust, 'failed');
  t.match(full.authentication, { spf: 'fail', dkim: 'none', dmarc: 'fail', reason: /bank\.test publishes DMARC/ });
  const stored = (await storedRaw(app.app, email, full.id)).toString();
  t.equal(stored.match(/^Authentication-Results:/gim)?.length, 2, "ours and the other host's");
  t.match(stored, /^Received: [\s\S]*?\r\nAuthentication-Results: mx\.here\.test;\r\n\tdkim=none[\s\S]*dmarc=fail/);
  t.match(stored, /\r\nAuthentication-Results: relay\.other\.test; spf=pass/, "another host's field is not ours to remove");
  t.notMatch(stored, /\(forged\)|dmarc=pass/, 'the forged fields are gone');
});

t.test('unsigned mail without records is unverified; a broken signature is suspicious', async (t) => {
  const app = await startApp(t, { smtp: { hostname: HOST } });
  const dns = app.dns as TestDnsServer;
  const { email, apiKey } = await app.register();
  await smtpSend(app.smtpPort, { from: 'someone@plain.test', to: email, subject: 'plain', text: 'hi' });
  let message = await firstMessage(app, apiKey);
  t.equal(message.full.trust, 'unverified');
  t.match(message.full.authentication, { spf: 'none', dkim: 'none', dmarc: 'none', arc: 'none' });

  const key = dkimKey();
  dns.set('s1._domainkey.lists.test', { TXT: [key.record] });
  const original = `From: a@lists.test\r\nTo: ${email}\r\nSubject: original\r\n\r\nbody\r\n`;
  // mailauth reads signatureData; its typings name only the top-level form, which signs nothing.
  const signed = await dkimSign(original, { signatureData: [{ signingDomain: 'lists.test', selector: 's1', privateKey: key.pem }] } as never);
  t.match(signed.signatures, /^DKIM-Signature: /);
  await smtpSendRaw(app.smtpPort, 'a@lists.test', [email], signed.signatures + original.replace('Subject: original', 'Subject: altered'));
  message = await firstMessage(app, apiKey);
  t.equal(message.full.subject, 'altered');
  t.equal(message.full.trust, 'suspicious');
  t.match(message.full.authentication, { dkim: 'fail', dmarc: 'none' });
});

t.test('an ARC chain sealed by a forwarder verifies', async (t) => {
  const app = await startApp(t, { smtp: { hostname: HOST } });
  const dns = app.dns as TestDnsServer;
  const key = dkimKey();
  dns.set('arc._domainkey.forwarder.test', { TXT: [key.record] });
  const { email, apiKey } = await app.register();
  const original = `From: a@origin.test\r\nTo: ${email}\r\nSubject: forwarded\r\nMessage-ID: <f@origin.test>\r\n\r\nbody\r\n`;
  const seal = await sealMessage(original, {
    signingDomain: 'forwarder.test',
    selector: 'arc',
    privateKey: key.pem,
    ...{ cv: 'none', authResults: 'forwarder.test; spf=pass smtp.mailfrom=a@origin.test' },
  });
  await smtpSendRaw(app.smtpPort, 'a@origin.test', [email], Buffer.concat([seal, Buffer.from(original)]));
  const { full } = await firstMessage(app, apiKey);
  t.equal(full.authentication.arc, 'pass');
  t.equal(full.trust, 'unverified', 'ARC alone does not vouch for the From domain');
});

t.test('DNS that never answers: the message is stored with temperror verdicts', async (t) => {
  const app = await startApp(t, { smtp: { hostname: HOST, authenticationTimeoutMs: 300 } });
  const dns = app.dns as TestDnsServer;
  for (const name of ['slow.test', '_dmarc.slow.test']) dns.silence(name);
  const { email, apiKey } = await app.register();
  const sent = await smtpSend(app.smtpPort, { from: 'a@slow.test', to: email, subject: 'slow', text: 'hi' });
  t.match(sent.response, /^250 /);
  const { full } = await firstMessage(app, apiKey);
  t.same(
    { trust: full.trust, ...full.authentication, reason: undefined },
    {
      trust: 'unverified',
      spf: 'temperror',
      dkim: 'temperror',
      dmarc: 'temperror',
      arc: 'temperror',
      reason: undefined,
    },
  );
  t.match(
    (await storedRaw(app.app, email, full.id)).toString(),
    /\r\nAuthentication-Results: mx\.here\.test;\r\n\tspf=temperror \(lookups took longer than 300 ms\)/,
  );
});

t.test("mail between mailboxes of this service is verified by the sender's key", async (t) => {
  const app = await startApp(t, { smtp: { hostname: HOST } });
  const sender = await funded(app, 5);
  const recipient = await app.register();
  const sent = await app.api('POST', '/api/v1/agent/send', { key: sender.apiKey, body: { to: recipient.email, subject: 'local', text: 'hi' } });
  t.equal(sent.status, 200);
  const { full } = await firstMessage(app, recipient.apiKey);
  t.equal(full.trust, 'verified');
  t.match(full.authentication, { spf: 'none', dkim: 'none', dmarc: 'none', arc: 'none', reason: /mailbox of this service/ });
  t.match(
    (await storedRaw(app.app, recipient.email, full.id)).toString(),
    // Our trace field first, as on mail from the MX, then our verdict (src/services/mail/delivery-agent.ts).
    new RegExp(
      `^Received: from mx\\.here\\.test \\(authenticated sender, rest\\)\\r\\n[^]*?\\r\\nAuthentication-Results: mx\\.here\\.test;\\r\\n\\tauth=pass smtp\\.auth=${sender.email.replace(/[.]/g, '\\.')}\\r\\n`,
    ),
  );

  const sentCopy = await app.api('GET', '/api/v1/agent/inbox?folder=Sent', { key: sender.apiKey });
  t.notOk('trust' in sentCopy.body.emails[0], 'a Sent copy carries no verdict');

  const transport = submissionTransport(t, app.submissionPort, sender.email, sender.apiKey);
  const raw = `Authentication-Results: mx.here.test; dmarc=pass header.from=bank.test\r\nFrom: ${sender.email}\r\nTo: ${recipient.email}\r\nSubject: raw\r\n\r\nbody\r\n`;
  await transport.sendMail({ envelope: { from: sender.email, to: [recipient.email] }, raw });
  transport.close();
  const again = await firstMessage(app, recipient.apiKey);
  t.equal(again.full.subject, 'raw');
  const stored = (await storedRaw(app.app, recipient.email, again.full.id)).toString();
  t.equal(stored.match(/^Authentication-Results:/gim)?.length, 1, 'a submitted field claiming to be ours does not reach the recipient');
  t.notMatch(stored, /bank\.test/);
});

t.test('with smtp.authenticationChecks off: no lookup, no verdict, our field says none, forged fields still removed', async (t) => {
  const app = await startApp(t, { smtp: { hostname: HOST, authenticationChecks: false } });
  const dns = app.dns as TestDnsServer;
  publishSender(dns, 'sender.test', dkimKey());
  const { email, apiKey } = await app.register();
  const forged = 'Authentication-Results: mx.here.test; dmarc=pass header.from=sender.test\r\n';
  await smtpSendRaw(app.smtpPort, 'ada@sender.test', [email], `${forged}From: ada@sender.test\r\nTo: ${email}\r\nSubject: unjudged\r\n\r\nbody\r\n`);

  const { listed, full } = await firstMessage(app, apiKey);
  t.equal(full.subject, 'unjudged');
  t.notOk('trust' in listed || 'trust' in full || 'authentication' in full, 'no verdict is shown');
  const stored = (await storedRaw(app.app, email, listed.id)).toString();
  t.match(stored, /^Received: [\s\S]*?\r\nAuthentication-Results: mx\.here\.test; none\r\nFrom: /, 'RFC 8601 section 2.2: no method applied');
  t.equal(stored.match(/^Authentication-Results:/gim)?.length, 1, 'the forged field is gone');
  t.same(
    dns.queries.filter((query) => query.includes('sender.test')),
    [],
    'nothing was looked up',
  );
});
