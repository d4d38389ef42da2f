import { Resolver } from 'node:dns/promises';
import { isNoRecords, type DnsResolver } from '../core/dns.js';

export interface DnsSettings {
  /** `dns.servers`: `ip` or `ip:port` entries; empty means the system's (/etc/resolv.conf). */
  servers: string[];
  /** `dns.timeoutMs`: how long one try waits for an answer. */
  timeoutMs: number;
  /** `dns.tries`: tries per server before a lookup fails with ETIMEOUT. */
  tries: number;
}

/**
 * The service's one resolver (docs/design.md "DNS"): c-ares through node:dns `Resolver`, asking
 * the configured servers directly, so the answers are the same for delivery, webhook checks,
 * inbound authentication and the deployment checks.
 */
export const createDnsResolver = (settings: DnsSettings): DnsResolver => {
  const resolver = new Resolver({ timeout: settings.timeoutMs, tries: settings.tries });
  if (settings.servers.length > 0) resolver.setServers(settings.servers);
  return {
    resolveMx: (name) => resolver.resolveMx(name),
    resolve4: (name) => resolver.resolve4(name),
    resolve6: (name) => resolver.resolve6(name),
    resolveTxt: (name) => resolver.resolveTxt(name),
    resolveCname: (name) => resolver.resolveCname(name),
    resolvePtr: (name) => resolver.resolvePtr(name),
    resolveAddresses: (name) => resolveAddresses(resolver, name),
  };
};

/** Both families at once; fails only when neither has an address, with the more telling error. */
const resolveAddresses = async (resolver: Resolver, hostname: string): Promise<string[]> => {
  const name = hostname.toLowerCase().replace(/\.$/, '');
  // RFC 6761 section 6.3: localhost names always resolve to loopback and are never sent to DNS.
  if (name === 'localhost' || name.endsWith('.localhost')) return ['127.0.0.1', '::1'];
  const results = await Promise.allSettled([resolver.resolve4(name), resolver.resolve6(name)]);
  const found = results.flatMap((result) => (result.status === 'fulfilled' ? result.value : []));
  if (found.length > 0) return found;
  const errors = results.flatMap((result) => (result.status === 'rejected' ? [result.reason as unknown] : []));
  // A timeout or server failure says more than "no AAAA record" beside it.
  throw errors.find((error) => !isNoRecords(error)) ?? errors[0] ?? Object.assign(new Error(`queryA ENODATA ${name}`), { code: 'ENODATA' });
};
