import { asciiDomain } from '../../core/addresses.js';
import type { MxResolver, NextHopHost, Route, SmtpAnswer } from '../../core/outbound.js';
import { isLocalName, mayConnectTo } from '../../core/public-address.js';
import type { StsDecision } from './mta-sts.js';

/** The MTA-STS verdict for a domain and its mail servers (mta-sts.ts); none when not wired. */
export interface StsPolicies {
  decide(domain: string, exchanges: string[]): Promise<StsDecision>;
}

export interface NextHopConfig {
  /** `outbound.relay`: an smtp:// or smtps:// URL, optionally with user:pass; wins over MX. */
  relay?: string;
  /** `outbound.port`: the port of direct MX delivery (25; tests point it at a loopback sink). */
  port: number;
  /**
   * `outbound.allowLoopbackMx`, for local development and tests only: MX answers may point at
   * loopback. Without it only public addresses are used, as for webhooks.
   */
  allowLoopback: boolean;
}

/** A domain's route, or why there is none: failed is definite, deferred is worth retrying. */
export type NextHop = { ok: true; route: Route } | { ok: false; status: 'failed' | 'deferred'; answer: SmtpAnswer };

/** At most this many addresses are tried per attempt, so a long MX list cannot stall a batch. */
const MAX_HOSTS = 6;

/** Parses `outbound.relay`. Throws on a URL the config schema let through but we cannot use. */
export const relayRoute = (url: string): Route => {
  const parsed = new URL(url);
  if (parsed.protocol !== 'smtp:' && parsed.protocol !== 'smtps:') throw new Error('outbound.relay must be an smtp:// or smtps:// URL');
  const secure = parsed.protocol === 'smtps:';
  const host = parsed.hostname.replace(/^\[(.*)\]$/, '$1');
  const route: Route = {
    kind: 'relay',
    hosts: [{ host, servername: host }],
    port: parsed.port ? Number(parsed.port) : secure ? 465 : 25,
    secure,
    key: `relay:${host}:${parsed.port}:${decodeURIComponent(parsed.username)}`,
  };
  if (parsed.username) route.auth = { user: decodeURIComponent(parsed.username), pass: decodeURIComponent(parsed.password) };
  return route;
};

/** Chooses where a domain's mail goes: the relay when configured, else its MX hosts. */
export class NextHopResolver {
  private readonly relay: Route | null;

  constructor(
    private readonly resolver: MxResolver,
    private readonly config: NextHopConfig,
    private readonly policies?: StsPolicies,
  ) {
    this.relay = config.relay ? relayRoute(config.relay) : null;
  }

  /** Through a relay every domain goes to one place, so one transaction can carry them all. */
  get usesRelay(): boolean {
    return this.relay !== null;
  }

  async resolve(domain: string): Promise<NextHop> {
    if (this.relay) return { ok: true, route: this.relay };
    // DNS knows internationalised names only in their ASCII form (IDNA A-labels).
    const name = asciiDomain(domain).replace(/\.$/, '');
    const exchanges = await this.exchanges(name);
    if (!exchanges.ok) return exchanges;
    const sts: StsDecision = (await this.policies?.decide(name, exchanges.names)) ?? { mode: 'none' };
    // RFC 8461 section 5: under an enforced policy only the mail servers it names are tried;
    // none named is a temporary failure, so the mail waits for the domain to fix its records.
    if (sts.mode === 'enforce' && sts.allowed.length === 0) {
      return {
        ok: false,
        status: 'deferred',
        answer: {
          smtpCode: 451,
          enhancedCode: '4.7.5',
          diagnostic: `451 4.7.5 the MTA-STS policy of ${name} (id ${sts.policyId}) names none of its mail servers (${exchanges.names.join(', ')})`,
        },
      };
    }
    const hosts: NextHopHost[] = [];
    let lookupFailed = false;
    let blocked = 0;
    for (const exchange of sts.mode === 'enforce' ? sts.allowed : exchanges.names) {
      if (hosts.length >= MAX_HOSTS) break;
      const addresses = await this.addresses(exchange);
      if (addresses === null) lookupFailed = true;
      for (const address of addresses ?? []) {
        // DNS is the recipient's say-so: it must not route our SMTP client inside.
        if (this.mayUse(exchange, address)) hosts.push({ host: address, servername: exchange });
        else blocked += 1;
      }
    }
    if (hosts.length === 0) {
      if (lookupFailed) return deferred(`4.4.3 DNS lookup of the mail servers of ${name} failed`);
      // RFC 3463 5.4.4: unable to route. Only non-public addresses: retrying cannot help.
      if (blocked > 0) return failed(550, '5.4.4', `the mail servers of ${name} resolve only to addresses that are not public`);
      return failed(550, '5.1.2', `no address for any mail server of ${name}`);
    }
    // Sessions under a policy are pooled apart from those without: each was checked as its mode asks.
    const mtaSts = sts.mode === 'none' ? undefined : { mode: sts.mode, domain: name, policyId: sts.policyId };
    const key = `mx:${name}:${this.config.port}${mtaSts ? `:mta-sts-${mtaSts.mode}` : ''}`;
    return { ok: true, route: { kind: 'mx', hosts: hosts.slice(0, MAX_HOSTS), port: this.config.port, secure: false, mtaSts, key } };
  }

  private mayUse(exchange: string, address: string): boolean {
    if (this.config.allowLoopback) return mayConnectTo(address, true);
    return !isLocalName(exchange) && mayConnectTo(address, false);
  }

  /**
   * RFC 5321 section 5.1: MX hosts by preference (ties in random order); no MX records means
   * the domain itself is the implicit MX. RFC 7505: a single "." MX means no mail at all.
   */
  private async exchanges(name: string): Promise<{ ok: true; names: string[] } | Extract<NextHop, { ok: false }>> {
    let records: { exchange: string; priority: number }[];
    try {
      records = await this.resolver.resolveMx(name);
    } catch (error) {
      const code = errorCode(error);
      if (code === 'ENOTFOUND') return failed(550, '5.1.2', `the domain ${name} does not exist`);
      if (code !== 'ENODATA') return deferred(`4.4.3 MX lookup of ${name} failed (${code ?? 'error'})`);
      records = [];
    }
    if (records.length === 0) return { ok: true, names: [name] };
    if (records.some((record) => isRoot(record.exchange))) {
      return failed(556, '5.1.10', `${name} accepts no mail (null MX, RFC 7505)`);
    }
    const shuffled = records.map((record) => ({ record, tie: Math.random() }));
    shuffled.sort((a, b) => a.record.priority - b.record.priority || a.tie - b.tie);
    return { ok: true, names: [...new Set(shuffled.map(({ record }) => record.exchange.toLowerCase().replace(/\.$/, '')))] };
  }

  /** IPv4 first (most senders here have no IPv6 route), then IPv6; null when DNS failed. */
  private async addresses(host: string): Promise<string[] | null> {
    const results = await Promise.allSettled([this.resolver.resolve4(host), this.resolver.resolve6(host)]);
    const found = results.flatMap((result) => (result.status === 'fulfilled' ? result.value : []));
    const hardMiss = results.every((result) => result.status === 'rejected' && ['ENODATA', 'ENOTFOUND'].includes(errorCode(result.reason) ?? ''));
    if (found.length === 0 && !hardMiss) return null;
    return found;
  }
}

/** RFC 7505 writes the null MX as "."; node:dns reports its exchange as an empty string. */
const isRoot = (exchange: string): boolean => exchange === '' || exchange === '.';

const errorCode = (error: unknown): string | undefined =>
  typeof error === 'object' && error !== null && 'code' in error ? String((error as { code: unknown }).code) : undefined;

const failed = (smtpCode: number, enhancedCode: string, text: string): Extract<NextHop, { ok: false }> => ({
  ok: false,
  status: 'failed',
  answer: { smtpCode, enhancedCode, diagnostic: `${smtpCode} ${enhancedCode} ${text}` },
});

const deferred = (text: string): Extract<NextHop, { ok: false }> => ({
  ok: false,
  status: 'deferred',
  answer: { smtpCode: 451, enhancedCode: '4.4.3', diagnostic: `451 ${text}` },
});
