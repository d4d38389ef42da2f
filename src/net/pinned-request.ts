import http, { type IncomingHttpHeaders, type IncomingMessage } from 'node:http';
import https from 'node:https';
import type { LookupFunction } from 'node:net';
import { rootCertificates } from 'node:tls';
import ipaddr from 'ipaddr.js';
import type { WebhookTarget } from '../core/webhook-target.js';

export interface PinnedRequest {
  method: 'GET' | 'POST';
  headers: Record<string, string | number>;
  body?: string;
  signal: AbortSignal;
  /** At most this much of the answer is read; the connection is closed past it. */
  maxResponseBytes: number;
  /** Trust anchors beside Node's own (a test's CA). */
  extraCa?: string[];
}

export interface PinnedResponse {
  status: number;
  headers: IncomingHttpHeaders;
  body: string;
  /** The answer was longer than maxResponseBytes and was cut there. */
  truncated: boolean;
}

/**
 * One request to a checked target (core/webhook-target.ts): it connects to exactly the
 * address that was checked (the lookup is pinned, so node never resolves the name a second
 * time), presents the URL's name for SNI and the certificate check, and follows no redirect.
 */
export const pinnedRequest = (target: WebhookTarget, request: PinnedRequest): Promise<PinnedResponse> => {
  const { url } = target;
  const hostname = url.hostname.replace(/^\[(.*)\]$/, '$1');
  const isLiteral = ipaddr.isValid(hostname);
  const secure = url.protocol === 'https:';
  return new Promise((resolve, reject) => {
    const req = (secure ? https : http).request(
      {
        protocol: url.protocol,
        host: isLiteral ? target.address : hostname,
        port: url.port === '' ? undefined : Number(url.port),
        path: url.pathname + url.search,
        method: request.method,
        agent: false,
        lookup: pinnedLookup(target),
        // SNI and certificate checks use the name from the URL (RFC 6066 section 3: no literals in SNI).
        ...(secure && !isLiteral && { servername: hostname }),
        ...(secure && request.extraCa && { ca: [...rootCertificates, ...request.extraCa] }),
        signal: request.signal,
        headers: request.headers,
      },
      (res) => {
        readCapped(res, request.maxResponseBytes).then(
          ({ body, truncated }) => resolve({ status: res.statusCode ?? 0, headers: res.headers, body, truncated }),
          reject,
        );
      },
    );
    req.on('error', reject);
    req.end(request.body);
  });
};

/** node:net asks with `all: true` when it may try several families (autoSelectFamily). */
const pinnedLookup =
  (target: WebhookTarget): LookupFunction =>
  (_hostname, options, callback) => {
    if (options.all)
      (callback as (error: null, addresses: { address: string; family: number }[]) => void)(null, [{ address: target.address, family: target.family }]);
    else callback(null, target.address, target.family);
  };

/** Reads at most `max` bytes, then stops reading and closes the connection. */
const readCapped = (res: IncomingMessage, max: number): Promise<{ body: string; truncated: boolean }> =>
  new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    let done = false;
    const finish = () => {
      if (done) return;
      done = true;
      resolve({ body: Buffer.concat(chunks).subarray(0, max).toString('utf8'), truncated: size > max });
    };
    res.on('data', (chunk: Buffer) => {
      chunks.push(chunk);
      size += chunk.length;
      if (size > max) {
        finish();
        res.destroy();
      }
    });
    res.on('end', finish);
    res.on('error', (error) => (done ? undefined : reject(error)));
  });

/** Rejects with the signal's reason as soon as it aborts, whatever `work` is doing. */
export const abortable = <T>(work: Promise<T>, signal: AbortSignal): Promise<T> => {
  if (signal.aborted) return Promise.reject(signal.reason);
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason);
    signal.addEventListener('abort', onAbort, { once: true });
    work.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
};
