import { writeFileSync } from 'node:fs';
import { connect as netConnect } from 'node:net';
import { join } from 'node:path';
import { connect as tlsConnect, type ConnectionOptions, type TLSSocket } from 'node:tls';
import { generate } from 'selfsigned';

/** PEM text of a certificate (chain) and its key. */
export interface Pems {
  cert: string;
  key: string;
}

/** A certificate authority made for one test: clients trust it with `ca: [ca.cert]`. */
export const makeCa = async (name = 'agentpost test CA'): Promise<Pems> => {
  const made = await generate([{ name: 'commonName', value: name }], {
    keyType: 'ec',
    algorithm: 'sha256',
    extensions: [
      { name: 'basicConstraints', cA: true, critical: true },
      { name: 'keyUsage', keyCertSign: true, cRLSign: true, critical: true },
    ],
  });
  return { cert: made.cert, key: made.private };
};

/**
 * A server certificate for `names` (subjectAltName DNS entries), signed by `ca` when given,
 * else self-signed. `notAfter` in the past makes an expired one.
 */
export const makeCertificate = async (names: string[], options: { ca?: Pems; notAfter?: Date; notBefore?: Date } = {}): Promise<Pems> => {
  const notBeforeDate = options.notBefore ?? new Date(Date.now() - 60 * 60 * 1000);
  const made = await generate([{ name: 'commonName', value: names[0] }], {
    keyType: 'ec',
    algorithm: 'sha256',
    notBeforeDate,
    notAfterDate: options.notAfter ?? new Date(Date.now() + 90 * 24 * 60 * 60 * 1000),
    ...(options.ca && { ca: options.ca }),
    extensions: [
      { name: 'basicConstraints', cA: false },
      { name: 'keyUsage', digitalSignature: true, keyEncipherment: true },
      { name: 'extKeyUsage', serverAuth: true },
      { name: 'subjectAltName', altNames: names.map((value) => ({ type: 2 as const, value })) },
    ],
  });
  return { cert: made.cert, key: made.private };
};

/** Writes the pair as `<name>.crt` and `<name>.key` into `dir`; returns the paths for `tls.cert`/`tls.key`. */
export const writePair = (dir: string, name: string, pems: Pems): { cert: string; key: string } => {
  const files = { cert: join(dir, `${name}.crt`), key: join(dir, `${name}.key`) };
  writeFileSync(files.cert, pems.cert);
  writeFileSync(files.key, pems.key);
  return files;
};

/** Resolves once the socket is encrypted; rejects with the handshake's error. */
const handshake = (socket: TLSSocket): Promise<TLSSocket> =>
  new Promise((resolve, reject) => {
    socket.once('secureConnect', () => resolve(socket));
    socket.once('error', reject);
  });

/** Implicit TLS (RFC 8314): the handshake comes first. The caller ends the socket. */
export const tlsOpen = (port: number, options: ConnectionOptions = {}): Promise<TLSSocket> => handshake(tlsConnect({ host: '127.0.0.1', port, ...options }));

/**
 * SMTP STARTTLS (RFC 3207) by hand: greeting, EHLO, STARTTLS, then the handshake on the
 * same socket. Resolves to the TLS socket and the EHLO answer seen before it.
 */
export const smtpStartTls = async (port: number, options: ConnectionOptions = {}): Promise<{ socket: TLSSocket; ehlo: string }> => {
  const plain = netConnect(port, '127.0.0.1');
  plain.setEncoding('utf8');
  let buffer = '';
  const reply = (): Promise<string> =>
    new Promise((resolve, reject) => {
      const look = () => {
        const match = /^(?:\d{3}-[^\r\n]*\r\n)*\d{3}(?: [^\r\n]*)?\r\n/.exec(buffer);
        if (!match) return;
        buffer = buffer.slice(match[0].length);
        plain.off('data', onData);
        plain.off('error', reject);
        resolve(match[0]);
      };
      const onData = (chunk: string) => {
        buffer += chunk;
        look();
      };
      plain.on('data', onData);
      plain.once('error', reject);
      look();
    });
  await reply();
  plain.write('EHLO client.test\r\n');
  const ehlo = await reply();
  plain.write('STARTTLS\r\n');
  const ready = await reply();
  if (!ready.startsWith('220')) throw new Error(`STARTTLS refused: ${ready}`);
  return { socket: await handshake(tlsConnect({ socket: plain, ...options })), ehlo };
};

/** The DNS names of the certificate the server presented. */
export const presentedNames = (socket: TLSSocket): string[] =>
  (socket.getPeerCertificate().subjectaltname ?? '').split(', ').map((entry) => entry.replace(/^DNS:/, ''));

/** A logger that keeps its entries, and waits for one whose message matches. */
export const recordingLogger = () => {
  const entries: { level: string; message: string; fields: Record<string, unknown> }[] = [];
  const waiters: { pattern: RegExp; resolve: (entry: (typeof entries)[number]) => void }[] = [];
  const emit =
    (level: string) =>
    (message: string, fields: Record<string, unknown> = {}) => {
      const entry = { level, message, fields };
      entries.push(entry);
      for (const waiter of [...waiters]) {
        if (!waiter.pattern.test(message)) continue;
        waiters.splice(waiters.indexOf(waiter), 1);
        waiter.resolve(entry);
      }
    };
  return {
    logger: { debug: emit('debug'), info: emit('info'), warn: emit('warn'), error: emit('error') },
    entries,
    /** The next entry, logged from now on, whose message matches. */
    next: (pattern: RegExp) => new Promise<(typeof entries)[number]>((resolve) => waiters.push({ pattern, resolve })),
  };
};
