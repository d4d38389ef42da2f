import { X509Certificate } from 'node:crypto';
import { request } from 'node:https';
import { networkInterfaces } from 'node:os';
import { join } from 'node:path';
import nodemailer from 'nodemailer';
import type SMTPTransport from 'nodemailer/lib/smtp-transport/index.js';
import t, { type Test } from 'tap';
import { startApp } from './helpers/app.js';
import { assertMatchesOpenApi } from './helpers/openapi.js';
import { smtpDialog } from './helpers/smtp.js';
import { makeCa, makeCertificate, tlsOpen, writePair, type Pems } from './helpers/tls.js';

/** Submission (RFC 8314: STARTTLS and implicit TLS, AUTH after TLS) and HTTPS with the tls certificates. */

const HOST = 'mail.agents.test';
const externalIPv4 = Object.values(networkInterfaces())
  .flat()
  .find((entry) => entry && entry.family === 'IPv4' && !entry.internal)?.address;

const certified = async (t: Test, overrides: Record<string, unknown> = {}) => {
  const dir = t.testdir({});
  const ca = await makeCa();
  const files = writePair(dir, 'mail', await makeCertificate([HOST], { ca }));
  const app = await startApp(t, { dataDir: join(dir, 'data'), smtp: { hostname: HOST }, tls: files, ...overrides });
  return { ...app, ca, dir };
};

const tlsApp = async (t: Test, overrides: Record<string, unknown> = {}) => {
  const app = await certified(t, overrides);
  const agent = await app.register();
  await app.app.services.accounts.addCredits(agent.email, 10);
  await app.app.services.sending.setState(agent.email, 'standard');
  return { ...app, agent };
};

const submit = async (options: SMTPTransport.Options, agent: { email: string; apiKey: string }) => {
  const transport = nodemailer.createTransport({ ...options, auth: { user: agent.email, pass: agent.apiKey } });
  try {
    return await transport.sendMail({ from: agent.email, to: 'someone@example.com', subject: 'over tls', text: 'x' });
  } finally {
    transport.close();
  }
};

t.test('submission: STARTTLS on the plain port, implicit TLS on submission.tlsPort; no TLS listener without a certificate', async (t) => {
  const plain = await startApp(t);
  t.equal(plain.app.ports.submissionTls, null, 'no certificate: no implicit-TLS listener');
  t.notMatch((await smtpDialog(plain.submissionPort, ['EHLO client.test']))[1], /STARTTLS/);

  const app = await tlsApp(t);
  t.match((await smtpDialog(app.submissionPort, ['EHLO client.test']))[1], /250[- ]STARTTLS/);
  const tls = { servername: HOST, ca: [app.ca.cert] };
  const upgraded = await submit({ host: '127.0.0.1', port: app.submissionPort, requireTLS: true, tls }, app.agent);
  t.match(upgraded.response, /^250 /);
  const port = app.app.ports.submissionTls as number;
  t.ok(port > 0, 'submission.tlsPort 0 picked a free port');
  const implicit = await submit({ host: '127.0.0.1', port, secure: true, tls }, app.agent);
  t.match(implicit.response, /^250 /);
  const [greeting, ehlo] = await smtpDialogOverTls(port, app.ca);
  t.match(greeting, /^220 /, 'the greeting comes after the handshake (RFC 8314 section 3.3)');
  t.notMatch(ehlo, /STARTTLS/, 'no STARTTLS inside TLS');
});

/** EHLO over an implicit-TLS connection: the greeting and the EHLO answer. */
const smtpDialogOverTls = async (port: number, ca: Pems): Promise<string[]> => {
  const socket = await tlsOpen(port, { servername: HOST, ca: [ca.cert] });
  socket.setEncoding('utf8');
  let text = '';
  socket.on('data', (chunk: string) => (text += chunk));
  const until = (pattern: RegExp) =>
    new Promise<void>((resolve) => {
      const look = () => pattern.test(text) && (socket.off('data', look), resolve());
      socket.on('data', look);
      look();
    });
  await until(/^220 [^\r]*\r\n/);
  socket.write('EHLO client.test\r\n');
  await until(/\r\n250 [^\r]*\r\n$/);
  socket.end();
  const [greeting, ...rest] = text.split('\r\n');
  return [greeting, rest.join('\r\n')];
};

t.test(
  'submission: AUTH from outside this host needs TLS (RFC 8314 section 3; 538 before it)',
  { skip: externalIPv4 ? false : 'no non-loopback interface' },
  async (t) => {
    const app = await tlsApp(t, { submission: { host: '0.0.0.0' } });
    const host = externalIPv4 as string;
    const tls = { servername: HOST, ca: [app.ca.cert] };
    const refused = await submit({ host, port: app.submissionPort, ignoreTLS: true }, app.agent).then(
      () => null,
      (error: unknown) => error,
    );
    t.match(refused, { responseCode: 538 }, 'in the clear: 538 5.7.11');
    t.match((await submit({ host, port: app.submissionPort, requireTLS: true, tls }, app.agent)).response, /^250 /, 'after STARTTLS');
    t.match((await submit({ host, port: app.app.ports.submissionTls as number, secure: true, tls }, app.agent)).response, /^250 /, 'over implicit TLS');
  },
);

const httpsGet = (port: number, path: string, ca: Pems): Promise<{ status: number; body: unknown }> =>
  new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, servername: HOST, ca: [ca.cert] }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (text += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(text) }));
    });
    req.on('error', reject);
    req.end();
  });

t.test('http.tls serves HTTPS with the certificates, and a reload reaches clients without SNI too', async (t) => {
  const app = await certified(t, { http: { tls: true } });
  t.match(app.baseUrl, /^https:\/\/127\.0\.0\.1:\d+$/);
  const port = app.app.ports.http;
  const health = await httpsGet(port, '/healthz', app.ca);
  assertMatchesOpenApi('GET', '/healthz', health.status, health.body);
  t.same(health, { status: 200, body: { status: 'ok' } });
  const fingerprint = async () => {
    const socket = await tlsOpen(port, { ca: [app.ca.cert], checkServerIdentity: () => undefined });
    const served = socket.getPeerCertificate().fingerprint256;
    socket.end();
    return served;
  };
  const before = await fingerprint();
  const renewed = await makeCertificate([HOST], { ca: app.ca });
  writePair(app.dir, 'mail', renewed);
  app.app.reloadCertificates('signal');
  // An IP literal sends no SNI (RFC 6066 section 3): this is the server's default context.
  const after = await fingerprint();
  t.not(after, before);
  t.equal(after, new X509Certificate(renewed.cert).fingerprint256);
});
