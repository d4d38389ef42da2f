import type { AddressResolver } from '../core/address-resolver.js';
import type { MtaStsFetcher } from '../core/mta-sts.js';
import { resolveWebhookTarget } from '../core/webhook-target.js';
import { abortable, pinnedRequest } from './pinned-request.js';

export interface MtaStsHttpOptions {
  /** `outbound.allowLoopbackMx` (tests): a policy host on loopback, and any port. */
  allowLoopback: boolean;
  timeoutMs: number;
  /** Tests serve the policy on a port of their own; RFC 8461 section 3.3 fixes 443. */
  port?: number;
  /** Trust anchors beside Node's own (a test's CA). */
  extraCa?: string[];
}

/** Section 3.2 caps nothing, but a policy is a few lines; more than this is not a policy. */
const MAX_POLICY_BYTES = 64 * 1024;
const USER_AGENT = 'agentpost-mta-sts/1.0';

/**
 * Fetches a recipient domain's MTA-STS policy (RFC 8461 section 3.3) through the webhook
 * client's checks: HTTPS to a public address only, the name resolved once and that address
 * used, the certificate verified for `mta-sts.<domain>`, no redirect followed, 200 only.
 */
export class HttpsMtaStsFetcher implements MtaStsFetcher {
  constructor(
    private readonly resolver: AddressResolver,
    private readonly options: MtaStsHttpOptions,
  ) {}

  async fetchPolicy(domain: string): Promise<string> {
    const port = this.options.port === undefined ? '' : `:${this.options.port}`;
    const url = `https://mta-sts.${domain}${port}/.well-known/mta-sts.txt`;
    const signal = AbortSignal.timeout(this.options.timeoutMs);
    const target = await abortable(resolveWebhookTarget(url, this.resolver, { allowInsecure: this.options.allowLoopback }), signal);
    const response = await pinnedRequest(target, {
      method: 'GET',
      headers: { 'user-agent': USER_AGENT, accept: 'text/plain' },
      signal,
      maxResponseBytes: MAX_POLICY_BYTES,
      extraCa: this.options.extraCa,
    });
    if (response.status !== 200) throw new Error(`${url} answered HTTP ${response.status} (only 200 counts; redirects are not followed)`);
    const type = String(response.headers['content-type'] ?? '')
      .split(';')[0]
      .trim()
      .toLowerCase();
    if (type !== 'text/plain') throw new Error(`${url} is served as ${type || 'no media type'}, not text/plain`);
    if (response.truncated) throw new Error(`${url} is larger than ${MAX_POLICY_BYTES} bytes`);
    return response.body;
  }
}
