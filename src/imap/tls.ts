import type { Socket } from 'node:net';
import { TLSSocket } from 'node:tls';
import type { ServerCertificates } from '../core/tls.js';

/** A client that has not finished its handshake by then is dropped. */
const HANDSHAKE_MS = 30_000;

/**
 * The server side of a TLS handshake on an accepted socket: for implicit TLS (RFC 8314
 * section 3.3) right away, for STARTTLS (RFC 3501 section 6.2.1) after the tagged OK. Every
 * handshake asks for the current certificates, so a reload reaches the next one.
 * Resolves with the encrypted socket; rejects (and destroys it) when the handshake fails.
 */
export const acceptTls = (socket: Socket, certificates: ServerCertificates): Promise<TLSSocket> =>
  new Promise((resolve, reject) => {
    const secure = new TLSSocket(socket, {
      isServer: true,
      secureContext: certificates.defaultContext(),
      SNICallback: (name, callback) => certificates.sniCallback(name, callback),
    });
    const fail = (error: Error) => {
      clearTimeout(timer);
      secure.destroy();
      socket.destroy();
      reject(error);
    };
    const timer = setTimeout(() => fail(new Error('TLS handshake timed out')), HANDSHAKE_MS);
    timer.unref();
    const closed = () => fail(new Error('connection closed during the TLS handshake'));
    secure.once('error', fail);
    secure.once('close', closed);
    secure.once('secure', () => {
      clearTimeout(timer);
      secure.off('error', fail);
      secure.off('close', closed);
      resolve(secure);
    });
  });
