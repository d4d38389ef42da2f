import http, { type IncomingMessage } from 'node:http';
import https from 'node:https';
import type { LookupFunction } from 'node:net';
import ipaddr from 'ipaddr.js';
import type { AddressResolver } from '../../core/address-resolver.js';
import { resolveWebhookTarget, TargetRefused, type WebhookTarget } from '../../core/webhook-target.js';
import type { AttemptOutcome, WebhookRequest, WebhookSender } from '../../core/webhooks.js';

export interface WebhookHttpOptions {
  allowInsecure: boolean;
  /** Contract Events 2: the whole attempt (DNS, connect, TLS, response) within 7 s. */
  timeoutMs: number;
  /** The response body read is capped; the receiver is asked for a small response. */
  maxResponseBytes: number;
}

const USER_AGENT = 'agentpost-webhooks/1.0';

/**
 * The outgoing HTTP adapter. Every attempt checks the target again (the DNS answer may
 * have changed since create), then connects to exactly the checked address: the lookup
 * is pinned, so node never resolves the name a second time. Redirects are not followed.
 */
export class HttpWebhookSender implements WebhookSender {
  constructor(private readonly resolver: AddressResolver, private readonly options: WebhookHttpOptions) {}

  async send(request: WebhookRequest, signal?: AbortSignal): Promise<AttemptOutcome> {
    const deadline = AbortSignal.timeout(this.options.timeoutMs);
    const combined = signal ? AbortSignal.any([signal, deadline]) : deadline;
    try {
      const target = await abortable(resolveWebhookTarget(request.url, this.resolver, this.options), combined);
      return await this.post(target, request, combined);
    } catch (error) {
      if (error instanceof TargetRefused) return { ok: false, error: error.code === 'dns_error' ? 'dns_error' : 'blocked_address' };
      if (deadline.aborted) return { ok: false, error: 'timeout' };
      if (signal?.aborted) return { ok: false, error: 'aborted' };
      return { ok: false, error: networkErrorCode(error as NodeJS.ErrnoException) };
    }
  }

  private post(target: WebhookTarget, request: WebhookRequest, signal: AbortSignal): Promise<AttemptOutcome> {
    const { url } = target;
    const hostname = url.hostname.replace(/^\[(.*)\]$/, '$1');
    const isLiteral = ipaddr.isValid(hostname);
    const client = url.protocol === 'https:' ? https : http;
    return new Promise((resolve, reject) => {
      const req = client.request({
        protocol: url.protocol,
        host: isLiteral ? target.address : hostname,
        port: url.port === '' ? undefined : Number(url.port),
        path: url.pathname + url.search,
        method: 'POST',
        agent: false,
        lookup: pinnedLookup(target),
        // SNI and certificate checks use the name from the URL (RFC 6066 section 3: no literals in SNI).
        ...(url.protocol === 'https:' && !isLiteral && { servername: hostname }),
        signal,
        headers: {
          ...request.headers,
          'content-type': 'application/json',
          'content-length': Buffer.byteLength(request.body),
          'user-agent': USER_AGENT,
        },
      }, (res) => {
        readCapped(res, this.options.maxResponseBytes).then((body) => resolve(outcomeOf(res.statusCode ?? 0, body)), reject);
      });
      req.on('error', reject);
      req.end(request.body);
    });
  }
}

/** node:net asks with `all: true` when it may try several families (autoSelectFamily). */
const pinnedLookup = (target: WebhookTarget): LookupFunction => (_hostname, options, callback) => {
  if (options.all) (callback as (error: null, addresses: { address: string; family: number }[]) => void)(null, [{ address: target.address, family: target.family }]);
  else callback(null, target.address, target.family);
};

const outcomeOf = (status: number, body: string): AttemptOutcome => {
  if (status >= 200 && status < 300) return { ok: true, httpStatus: status, body };
  if (status >= 300 && status < 400) return { ok: false, httpStatus: status, error: 'redirect' };
  return { ok: false, httpStatus: status, error: `http_${status}` };
};

/** Reads at most `max` bytes, then stops reading and closes the connection. */
const readCapped = (res: IncomingMessage, max: number): Promise<string> => new Promise((resolve, reject) => {
  const chunks: Buffer[] = [];
  let size = 0;
  let done = false;
  const finish = () => {
    if (done) return;
    done = true;
    resolve(Buffer.concat(chunks).subarray(0, max).toString('utf8'));
  };
  res.on('data', (chunk: Buffer) => {
    chunks.push(chunk);
    size += chunk.length;
    if (size >= max) {
      finish();
      res.destroy();
    }
  });
  res.on('end', finish);
  res.on('error', (error) => (done ? undefined : reject(error)));
});

const abortable = <T>(work: Promise<T>, signal: AbortSignal): Promise<T> => {
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    work.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
};

/** Safe codes for the delivery history: never a message from the remote side. */
const networkErrorCode = (error: NodeJS.ErrnoException): string => {
  const code = error.code ?? '';
  if (code === 'ECONNREFUSED') return 'connection_refused';
  if (code === 'ECONNRESET' || code === 'EPIPE' || code === 'ERR_STREAM_PREMATURE_CLOSE') return 'connection_reset';
  if (code === 'EHOSTUNREACH' || code === 'ENETUNREACH') return 'host_unreachable';
  if (code === 'ETIMEDOUT') return 'timeout';
  if (/^ERR_TLS|^ERR_SSL|CERT|^UNABLE_TO|SELF_SIGNED|^DEPTH_ZERO/.test(code)) return 'tls_error';
  if (code === 'HPE_INVALID_CONSTANT' || code.startsWith('HPE_')) return 'invalid_response';
  return 'network_error';
};
