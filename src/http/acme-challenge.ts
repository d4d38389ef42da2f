import { createServer, type IncomingMessage, type RequestListener, type Server, type ServerResponse } from 'node:http';
import type { AcmeChallenges } from '../core/tls.js';

/** RFC 8555 section 8.3: the CA asks `http://<name>/.well-known/acme-challenge/<token>`; a token is base64url. */
const CHALLENGE_PATH = /^\/\.well-known\/acme-challenge\/([A-Za-z0-9_-]+)$/;

/**
 * Answers the CA's http-01 requests with the key authorization of an order in progress and
 * hands every other request to `next` (the HTTP app when the challenge shares its listener).
 */
export const answerAcmeChallenges =
  (challenges: AcmeChallenges, next: RequestListener): RequestListener =>
  (request, response) => {
    const token = request.method === 'GET' || request.method === 'HEAD' ? CHALLENGE_PATH.exec(request.url ?? '')?.[1] : undefined;
    if (token === undefined) return next(request, response);
    const keyAuthorization = challenges.keyAuthorization(token);
    if (keyAuthorization === undefined) return plain(request, response, 404, 'no challenge in progress with this token\n');
    plain(request, response, 200, keyAuthorization);
  };

/**
 * The listener on `tls.acme.httpPort` (port 80 in production, the only one the CA asks):
 * the challenges and nothing else.
 */
export const createAcmeChallengeListener = (challenges: AcmeChallenges): Server => {
  const server = createServer(
    answerAcmeChallenges(challenges, (request, response) => plain(request, response, 404, 'only ACME http-01 challenges are answered here\n')),
  );
  server.keepAliveTimeout = 5000;
  return server;
};

const plain = (request: IncomingMessage, response: ServerResponse, status: number, body: string): void => {
  response.writeHead(status, { 'content-type': 'text/plain; charset=utf-8', 'content-length': Buffer.byteLength(body), 'cache-control': 'no-store' });
  response.end(request.method === 'HEAD' ? undefined : body);
};
