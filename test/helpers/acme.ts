import { X509Certificate } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { request } from 'node:https';
import { join } from 'node:path';
import type { ConnectionOptions, TLSSocket } from 'node:tls';
import type { Test } from 'tap';
import type { ConfigLayer } from '../../src/config/types.js';
import { startApp, type TestApp } from './app.js';
import { rawImap } from './imap.js';
import type { Pebble } from './pebble.js';

/** The MX name the ACME tests certify; pebble's DNS sends it to loopback. */
export const ACME_HOST = 'mail.acme.test';

/** An app whose certificate comes from this pebble, for ACME_HOST and whatever `overrides` add. */
export const startAcmeApp = (t: Test, pebble: Pebble, overrides: ConfigLayer = {}, options: Parameters<typeof startApp>[2] = {}): Promise<TestApp> => {
  pebble.dns.set(ACME_HOST, { A: ['127.0.0.1'] });
  const acme = { directoryUrl: pebble.directoryUrl, caFile: pebble.caFile, httpPort: pebble.httpPort, email: 'postmaster@acme.test' };
  const { tls, ...rest } = overrides as { tls?: { acme?: object } };
  return startApp(
    t,
    { smtp: { hostname: ACME_HOST }, dns: { servers: pebble.dns.servers }, ...rest, tls: { acme: { ...acme, ...tls?.acme } } },
    { acmePollMs: 50, ...options },
  );
};

/** The certificate in the data folder (acme/certificate.pem): SHA-256 fingerprint and names. */
export const storedCertificate = (app: TestApp): { fingerprint: string; names: string[]; notAfter: Date } => {
  const certificate = new X509Certificate(readFileSync(join(app.app.config.dataDir, 'acme', 'certificate.pem')));
  const names = (certificate.subjectAltName ?? '').split(', ').map((entry) => entry.replace(/^DNS:/, ''));
  return { fingerprint: certificate.fingerprint256, names, notAfter: new Date(certificate.validTo) };
};

/** The fingerprint of the certificate a TLS connection was shown. */
export const peerFingerprint = (socket: TLSSocket): string => socket.getPeerCertificate().fingerprint256;

/** IMAP STARTTLS (RFC 3501 section 6.2.1) on a fresh connection; closed when the test ends. */
export const imapStartTls = async (t: Test, port: number, tls: ConnectionOptions): Promise<TLSSocket> => {
  const imap = await rawImap(t, port);
  imap.send('a STARTTLS\r\n');
  await imap.read(/^a OK/m);
  return imap.startTls(tls);
};

/** One SMTP command on an open socket (in TLS or not): the whole reply. */
export const smtpCommand = (socket: TLSSocket, line: string): Promise<string> =>
  new Promise((resolve, reject) => {
    let text = '';
    const onData = (chunk: Buffer) => {
      text += chunk.toString('utf8');
      if (!/(^|\r\n)\d{3} [^\r\n]*\r\n$/.test(text)) return;
      socket.off('data', onData);
      resolve(text);
    };
    socket.on('data', onData);
    socket.once('error', reject);
    socket.write(`${line}\r\n`);
  });

/** A request over HTTPS to the app's listener, naming `servername` (SNI) and trusting `ca` only. */
export const httpsGet = (
  port: number,
  path: string,
  tls: { servername: string; ca: string[] },
  headers: Record<string, string> = {},
): Promise<{ status: number; body: string; fingerprint: string }> =>
  new Promise((resolve, reject) => {
    const outgoing = request({ host: '127.0.0.1', port, path, headers, agent: false, ...tls }, (response) => {
      const fingerprint = peerFingerprint(response.socket as TLSSocket);
      let body = '';
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => (body += chunk));
      response.on('end', () => resolve({ status: response.statusCode ?? 0, body, fingerprint }));
    });
    outgoing.on('error', reject);
    outgoing.end();
  });
