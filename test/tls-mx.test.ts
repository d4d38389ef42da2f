import { join } from 'node:path';
import nodemailer from 'nodemailer';
import t, { type Test } from 'tap';
import { startApp } from './helpers/app.js';
import { simpleMessage, storedRaw } from './helpers/mail.js';
import { smtpDialog, smtpSendRaw } from './helpers/smtp.js';
import { makeCa, makeCertificate, presentedNames, smtpStartTls, writePair } from './helpers/tls.js';

/** The MX with a certificate (issue 16 "TLS"): opportunistic STARTTLS, trace and read fields. */

const MX = 'mx.agents.test';

const tlsApp = async (t: Test, extra: Record<string, unknown> = {}) => {
  const ca = await makeCa();
  // One fixture folder per test: the data folder goes under it, beside the certificate files.
  const dir = t.testdir({});
  const files = writePair(dir, 'mx', await makeCertificate([MX], { ca }));
  const app = await startApp(t, { dataDir: join(dir, 'data'), smtp: { hostname: MX }, tls: { ...files, ...extra } });
  return { ...app, ca };
};

t.test('without a certificate the MX does not offer STARTTLS', async (t) => {
  const { smtpPort } = await startApp(t);
  const [, ehlo] = await smtpDialog(smtpPort, ['EHLO client.test']);
  t.notMatch(ehlo, /STARTTLS/);
});

t.test('with one it offers STARTTLS; mail over it says ESMTPS and its cipher, and the read says receivedOverTls', async (t) => {
  const { smtpPort, register, api, app, ca } = await tlsApp(t);
  const agent = await register();
  const [, ehlo] = await smtpDialog(smtpPort, ['EHLO client.test']);
  t.match(ehlo, /250[- ]STARTTLS/, 'offered in EHLO (RFC 3207 section 4)');

  const secure = nodemailer.createTransport({ host: '127.0.0.1', port: smtpPort, requireTLS: true, tls: { servername: MX, ca: [ca.cert] } });
  t.teardown(() => secure.close());
  await secure.sendMail({ envelope: { from: 'a@example.org', to: [agent.email] }, raw: simpleMessage({ subject: 'over tls', to: agent.email }) });
  // Opportunistic: a client that does not upgrade is still served.
  await smtpSendRaw(smtpPort, 'a@example.org', [agent.email], simpleMessage({ subject: 'in the clear', to: agent.email }));

  const inbox = (await api('GET', '/api/v1/agent/inbox', { key: agent.apiKey })).body;
  const bySubject = Object.fromEntries(inbox.emails.map((email: { subject: string; id: string }) => [email.subject, email.id]));
  const overTls = (await api('GET', `/api/v1/agent/email/${bySubject['over tls']}`, { key: agent.apiKey })).body;
  t.equal(overTls.receivedOverTls, true);
  t.match(overTls.tls, { version: /^TLSv1\.[23]$/, cipher: /^TLS_[A-Z0-9_]+$/ });
  const clear = (await api('GET', `/api/v1/agent/email/${bySubject['in the clear']}`, { key: agent.apiKey })).body;
  t.equal(clear.receivedOverTls, false);
  t.equal(clear.tls, null);

  const trace = (await storedRaw(app, agent.email, bySubject['over tls'])).toString('utf8').split('\r\n\r\n')[0];
  t.match(trace, new RegExp(`^Received: from [^\\r]+\\r\\n\\tby mx\\.agents\\.test \\(agentpost\\) with ESMTPS \\(${overTls.tls.version}\\) id `));
  t.match(trace, new RegExp(`\\r\\n\\ttls ${overTls.tls.cipher}; `), 'the RFC 8314 section 4.3 tls clause names the cipher suite');
  t.match((await storedRaw(app, agent.email, bySubject['in the clear'])).toString('utf8'), /^Received: [^;]+ with ESMTP id [^;]+; /);
});

t.test('tls.minVersion is what the listener accepts', async (t) => {
  const relaxed = await tlsApp(t);
  const ok = await smtpStartTls(relaxed.smtpPort, { servername: MX, ca: [relaxed.ca.cert], maxVersion: 'TLSv1.2' });
  t.equal(ok.socket.getProtocol(), 'TLSv1.2', 'the default (1.2) accepts a TLS 1.2 client');
  ok.socket.end();
  const strict = await tlsApp(t, { minVersion: '1.3' });
  await t.rejects(
    smtpStartTls(strict.smtpPort, { servername: MX, ca: [strict.ca.cert], maxVersion: 'TLSv1.2' }),
    /protocol version|alert/i,
    '1.3 refuses a 1.2 client',
  );
});

t.test('SNI picks the pair configured for the name asked for; other names get the default pair', async (t) => {
  const dir = t.testdir({});
  const ca = await makeCa();
  const tls = {
    ...writePair(dir, 'default', await makeCertificate([MX], { ca })),
    hosts: {
      'mx.other.test': writePair(dir, 'other', await makeCertificate(['mx.other.test'], { ca })),
      '*.wild.test': writePair(dir, 'wild', await makeCertificate(['*.wild.test'], { ca })),
    },
  };
  const { smtpPort } = await startApp(t, { dataDir: join(dir, 'data'), smtp: { hostname: MX }, tls });
  const ask = async (servername?: string) => {
    const { socket } = await smtpStartTls(smtpPort, { ...(servername && { servername }), ca: [ca.cert], checkServerIdentity: () => undefined });
    const names = presentedNames(socket);
    socket.end();
    return names;
  };
  t.same(await ask('mx.other.test'), ['mx.other.test']);
  t.same(await ask('MX.Other.Test'), ['mx.other.test'], 'names compare without case (RFC 6066 section 3)');
  t.same(await ask('a.wild.test'), ['*.wild.test']);
  t.same(await ask('a.b.wild.test'), [MX], 'a wildcard covers one label only');
  t.same(await ask('elsewhere.test'), [MX]);
  t.same(await ask(), [MX], 'no SNI: the default pair');
});
