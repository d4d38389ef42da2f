import type { AddressResolver } from '../core/address-resolver.js';
import { resolveWebhookTarget, TargetRefused, type WebhookTarget } from '../core/webhook-target.js';
import type { AttemptOutcome, WebhookRequest, WebhookSender } from '../core/webhooks.js';
import { abortable, pinnedRequest } from './pinned-request.js';

export interface WebhookHttpOptions {
  allowInsecure: boolean;
  /** The whole attempt (DNS, connect, TLS, response) within 7 s (`webhooks.timeoutMs`, docs/agents/webhooks.md). */
  timeoutMs: number;
  /** The response body read is capped; the receiver is asked for a small response. */
  maxResponseBytes: number;
}

const USER_AGENT = 'agentpost-webhooks/1.0';

/**
 * The outgoing HTTP adapter. Every attempt checks the target again (the DNS answer may
 * have changed since create), then connects to exactly the checked address (pinned-request.ts).
 * Redirects are not followed.
 */
export class HttpWebhookSender implements WebhookSender {
  constructor(
    private readonly resolver: AddressResolver,
    private readonly options: WebhookHttpOptions,
  ) {}

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

  private async post(target: WebhookTarget, request: WebhookRequest, signal: AbortSignal): Promise<AttemptOutcome> {
    const response = await pinnedRequest(target, {
      method: 'POST',
      signal,
      body: request.body,
      maxResponseBytes: this.options.maxResponseBytes,
      headers: {
        ...request.headers,
        'content-type': 'application/json',
        'content-length': Buffer.byteLength(request.body),
        'user-agent': USER_AGENT,
      },
    });
    return outcomeOf(response.status, response.body);
  }
}

const outcomeOf = (status: number, body: string): AttemptOutcome => {
  if (status >= 200 && status < 300) return { ok: true, httpStatus: status, body };
  if (status >= 300 && status < 400) return { ok: false, httpStatus: status, error: 'redirect' };
  return { ok: false, httpStatus: status, error: `http_${status}` };
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
