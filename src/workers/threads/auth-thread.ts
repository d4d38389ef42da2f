/**
 * The body of the authentication thread (see auth-thread-client.ts): SPF, DKIM, DMARC and
 * ARC of inbound mail (mailauth, with its own node:dns resolver on `dns.servers`) off the
 * main event loop. Checks run concurrently: most of their time is waiting for DNS.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { MessageAuthenticator } from '../../services/mail/authentication.js';
import { createDnsResolver } from '../../net/dns-resolver.js';
import type { AuthReply, AuthRequest, AuthResult, AuthThreadData } from './auth-protocol.js';
import { perTurn } from './turn-batch.js';

const port = parentPort;
if (!port) throw new Error('auth-thread runs only as a worker thread');
const data = workerData as AuthThreadData;
const authenticator = new MessageAuthenticator(createDnsResolver(data.dns), data.hostname, data.timeoutMs);

/** Results finished in this turn, posted together at its end. */
const reply = perTurn<AuthResult>((results) => port.postMessage({ type: 'results', results } satisfies AuthReply));

const checkOne = async (request: AuthRequest): Promise<void> => {
  const raw = Buffer.from(request.raw.buffer, request.raw.byteOffset, request.raw.byteLength);
  try {
    reply({ id: request.id, checked: await authenticator.check(raw, request.envelope, new Date(request.now)) });
  } catch (error) {
    reply({ id: request.id, error: error instanceof Error ? error.message : String(error) });
  }
};

port.on('message', (requests: AuthRequest[]) => {
  for (const request of requests) void checkOne(request);
});

port.postMessage({ type: 'ready' } satisfies AuthReply);
