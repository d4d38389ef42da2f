/**
 * The body of the authentication worker (see auth-client.ts): SPF, DKIM, DMARC and
 * ARC of inbound mail (mailauth, with its own node:dns resolver on `dns.servers`) off the
 * main event loop. Checks run concurrently: most of their time is waiting for DNS. The
 * main thread's watchdog sees which check holds the thread through `state` (running-check.ts).
 */
import { parentPort, workerData } from 'node:worker_threads';
import { loadMailauth, MessageAuthenticator } from '../services/mail/authentication.js';
import { createDnsResolver } from '../net/dns-resolver.js';
import { LOADING, type AuthReply, type AuthRequest, type AuthResult, type AuthWorkerData } from './auth-protocol.js';
import { trackRunningChecks } from './running-check.js';
import { releaseWhenQuiet } from '../runtime/memory-release.js';
import { perTurn } from './turn-batch.js';

const port = parentPort;
if (!port) throw new Error('auth-thread runs only as a worker thread');
const data = workerData as AuthWorkerData;
const authenticator = new MessageAuthenticator(createDnsResolver(data.dns), data.hostname, data.timeoutMs);

const checks = trackRunningChecks(new Int32Array(data.state));

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

let loadStarted = false;

/** This thread's heap too is collected once a burst is over (memory-release.ts). */
const quiet = releaseWhenQuiet(10_000);

port.on('message', (requests: AuthRequest[]) => {
  quiet.touch();
  // mailauth loads with the first checks (a server without mail does without its memory), as
  // nobody's check: a long load is not a check that holds the thread. The checks' own time
  // (smtp.authenticationTimeoutMs) counts from their arrival, the load included.
  // A failed load fails each check, which awaits the same promise (the message is stored unjudged).
  if (!loadStarted) void checks.run(LOADING, loadMailauth).catch(() => {});
  loadStarted = true;
  for (const request of requests) void checks.run(request.id, () => checkOne(request));
});

port.postMessage({ type: 'ready' } satisfies AuthReply);
