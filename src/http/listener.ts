import { createServer, type RequestListener, type Server } from 'node:http';
import { createServer as createHttpsServer, type Server as HttpsServer } from 'node:https';
import type { ServerCertificates } from '../core/tls.js';
import { answerMalformedRequest, answerUnknownExpectation } from './refusals.js';

export interface HttpListener {
  server: Server | HttpsServer;
  /** Stops following certificate reloads. */
  close(): void;
}

/**
 * Plain HTTP, or HTTPS (`http.tls`) with the `tls.*` certificates: SNI per name, the default
 * pair otherwise. node:https keeps its default context itself, so each reload replaces it.
 */
export const createHttpListener = (handler: RequestListener, certificates: ServerCertificates | null): HttpListener => {
  const server = certificates
    ? createHttpsServer({ ...certificates.defaultOptions(), SNICallback: (name, callback) => certificates.sniCallback(name, callback) }, handler)
    : createServer(handler);
  // Idle keep-alive longer than clients keep theirs (undici 4 s, proxies 60 s), so the server
  // never closes a connection that a client is reusing at that moment (ECONNRESET).
  server.keepAliveTimeout = 65_000;
  server.headersTimeout = 66_000;
  server.on('clientError', answerMalformedRequest);
  server.on('checkExpectation', answerUnknownExpectation);
  const close = certificates ? certificates.reloaded.subscribe(() => (server as HttpsServer).setSecureContext(certificates.defaultOptions())) : () => {};
  return { server, close: () => void close() };
};
