import { networkInterfaces } from 'node:os';
import { join } from 'node:path';
import { ImapFlow } from 'imapflow';
import t, { type Test } from 'tap';
import { startApp } from './helpers/app.js';
import { rawImap } from './helpers/imap.js';
import { deliverDirect, simpleMessage } from './helpers/mail.js';
import { makeCa, makeCertificate, writePair } from './helpers/tls.js';

/** IMAP with a certificate: STARTTLS (RFC 3501 section 6.2.1), implicit TLS (RFC 8314), LOGINDISABLED before TLS. */

const HOST = 'imap.agents.test';
const externalIPv4 = Object.values(networkInterfaces())
  .flat()
  .find((entry) => entry && entry.family === 'IPv4' && !entry.internal)?.address;

const tlsApp = async (t: Test, overrides: Record<string, unknown> = {}) => {
  const dir = t.testdir({});
  const ca = await makeCa();
  const files = writePair(dir, 'imap', await makeCertificate([HOST], { ca }));
  const app = await startApp(t, { dataDir: join(dir, 'data'), tls: files, ...overrides });
  const agent = await app.register();
  await deliverDirect(app.app, [agent.email], simpleMessage({ subject: 'hello over tls', to: agent.email }));
  return { ...app, ca, agent, tls: { servername: HOST, ca: [ca.cert] } };
};

const subjects = async (client: ImapFlow): Promise<string[]> => {
  await client.mailboxOpen('INBOX');
  const out: string[] = [];
  for await (const message of client.fetch('1:*', { envelope: true })) out.push(message.envelope?.subject ?? '');
  return out;
};

t.test('without a certificate no STARTTLS is offered and the command is refused', async (t) => {
  const { imapPort, app } = await startApp(t);
  t.equal(app.ports.imapTls, null, 'no implicit-TLS listener');
  const raw = await rawImap(t, imapPort);
  raw.send('a CAPABILITY\r\n');
  t.notMatch(await raw.read(/^a OK/m), /STARTTLS/);
  raw.send('b STARTTLS\r\n');
  t.match(await raw.read(/^b /m), /^b BAD STARTTLS is not available/m);
});

t.test('imapflow reads the mailbox after STARTTLS on the plain port and over implicit TLS on imap.tlsPort', async (t) => {
  const app = await tlsApp(t);
  const auth = { user: app.agent.email, pass: app.agent.apiKey };
  const upgraded = new ImapFlow({ host: '127.0.0.1', port: app.imapPort, secure: false, doSTARTTLS: true, tls: app.tls, auth, logger: false });
  upgraded.on('error', () => {});
  await upgraded.connect();
  t.teardown(() => upgraded.logout().catch(() => upgraded.close()));
  t.same(await subjects(upgraded), ['hello over tls']);
  t.ok(upgraded.secureConnection, 'the session is encrypted');

  const port = app.app.ports.imapTls as number;
  t.ok(port > 0, 'imap.tlsPort 0 picked a free port');
  const implicit = new ImapFlow({ host: '127.0.0.1', port, secure: true, tls: app.tls, auth, logger: false });
  implicit.on('error', () => {});
  await implicit.connect();
  t.teardown(() => implicit.logout().catch(() => implicit.close()));
  t.same(await subjects(implicit), ['hello over tls']);
});

t.test(
  'from outside this host: LOGINDISABLED until STARTTLS, then AUTH=PLAIN and LOGIN',
  { skip: externalIPv4 ? false : 'no non-loopback interface' },
  async (t) => {
    const app = await tlsApp(t, { imap: { host: '0.0.0.0' } });
    const raw = await rawImap(t, app.imapPort, { host: externalIPv4 });
    raw.send('a CAPABILITY\r\n');
    const before = await raw.read(/^a OK/m);
    t.match(before, /^\* CAPABILITY .*STARTTLS.* LOGINDISABLED\r\n/m);
    t.notMatch(before, /AUTH=PLAIN/);
    raw.send(`b LOGIN "${app.agent.email}" "${app.agent.apiKey}"\r\n`);
    t.match(await raw.read(/^b /m), /^b NO \[PRIVACYREQUIRED\]/m);
    raw.send('c STARTTLS\r\n');
    t.match(await raw.read(/^c /m), /^c OK Begin TLS negotiation now\r\n$/m);
    const secure = await raw.startTls(app.tls);
    t.ok(secure.authorized, 'the certificate verifies against the test CA for its name');
    raw.send('d CAPABILITY\r\n');
    const after = await raw.read(/^d OK/m);
    t.match(after, /^\* CAPABILITY .*AUTH=PLAIN\r\n/m);
    t.notMatch(after, /STARTTLS|LOGINDISABLED/, 'RFC 3501 section 6.2.1: STARTTLS is not offered again');
    raw.send(`e LOGIN "${app.agent.email}" "${app.agent.apiKey}"\r\n`);
    t.match(await raw.read(/^e /m), /^e OK /m);
    raw.send('f STARTTLS\r\n');
    t.match(await raw.read(/^f /m), /^f BAD /m, 'not in the authenticated state');
  },
);

t.test('commands sent in the clear behind STARTTLS are discarded, not run inside TLS', async (t) => {
  const app = await tlsApp(t);
  const raw = await rawImap(t, app.imapPort);
  // The injection: a client (or a man in the middle) pipelines a command after STARTTLS.
  raw.send(`a STARTTLS\r\nb LOGIN "${app.agent.email}" "${app.agent.apiKey}"\r\n`);
  t.match(await raw.read(/^a /m), /^a OK Begin TLS negotiation now\r\n$/m);
  await raw.startTls(app.tls);
  raw.send('c CAPABILITY\r\n');
  const answer = await raw.read(/^c OK/m);
  t.notMatch(answer, /^b /m, 'the pipelined LOGIN got no answer');
  t.match(answer, /AUTH=PLAIN/, 'still not authenticated: the capabilities are those before login');
  raw.send('d SELECT INBOX\r\n');
  t.match(await raw.read(/^d /m), /^d BAD SELECT is not allowed before LOGIN/m);
});
