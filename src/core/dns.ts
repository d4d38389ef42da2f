import { isIP } from 'node:net';
import type { AddressResolver } from './address-resolver.js';
import type { MxResolver } from './outbound.js';

/**
 * Every DNS lookup of the service goes through one of these (docs/design.md "DNS"):
 * src/net/dns-resolver.ts builds it on node:dns `Resolver` with `dns.servers`; tests inject a
 * fake or point `dns.servers` at a DNS server on loopback. Failures reject with node:dns error
 * codes (`ENOTFOUND` for NXDOMAIN, `ENODATA` for a name without records of the type, `ETIMEOUT`,
 * `ESERVFAIL`, ...).
 */
export interface DnsResolver extends MxResolver, AddressResolver {
  /** Each TXT record as its character-strings (RFC 1035 section 3.3.14); join them to read the record. */
  resolveTxt(name: string): Promise<string[][]>;
  resolveCname(name: string): Promise<string[]>;
  resolvePtr(name: string): Promise<string[]>;
}

/** The record types the service asks for (mailauth asks by type name, as dns.resolve takes it). */
export type RecordType = 'A' | 'AAAA' | 'MX' | 'TXT' | 'CNAME' | 'PTR';

/** `resolve(name, type)` in the shape of node:dns/promises `resolve`, over a DnsResolver. */
export const resolveByType =
  (resolver: DnsResolver) =>
  (name: string, type: string): Promise<unknown> => {
    switch (type.toUpperCase()) {
      case 'A':
        return resolver.resolve4(name);
      case 'AAAA':
        return resolver.resolve6(name);
      case 'MX':
        return resolver.resolveMx(name);
      case 'TXT':
        return resolver.resolveTxt(name);
      case 'CNAME':
        return resolver.resolveCname(name);
      case 'PTR':
        return resolver.resolvePtr(name);
      default:
        return Promise.reject(Object.assign(new Error(`query ${type} ENOTIMP ${name}`), { code: 'ENOTIMP' }));
    }
  };

/** The node:dns error code of a failed lookup, if it has one. */
export const dnsErrorCode = (error: unknown): string | undefined =>
  typeof error === 'object' && error !== null && 'code' in error ? String((error as { code: unknown }).code) : undefined;

/** True when the answer is definite: the name does not exist, or has no record of the type. */
export const isNoRecords = (error: unknown): boolean => ['ENOTFOUND', 'ENODATA'].includes(dnsErrorCode(error) ?? '');

/**
 * The reverse-lookup name of an address (RFC 1035 section 3.5, RFC 3596 section 2.5):
 * `4.3.2.1.in-addr.arpa` or the nibbles of the IPv6 address under `ip6.arpa`.
 */
export const reverseName = (address: string): string => {
  const family = isIP(address);
  if (family === 4) return `${address.split('.').reverse().join('.')}.in-addr.arpa`;
  if (family === 6) return `${[...expandIpv6(address)].reverse().join('.')}.ip6.arpa`;
  throw new Error(`not an IP address: ${address}`);
};

/** The 32 hex digits of an IPv6 address, including a dotted IPv4 tail (::ffff:1.2.3.4). */
const expandIpv6 = (address: string): string => {
  let text = address.toLowerCase().replace(/%.*$/, '');
  const v4 = text.match(/(\d+)\.(\d+)\.(\d+)\.(\d+)$/);
  if (v4) {
    const [a, b, c, d] = v4.slice(1).map(Number);
    text = `${text.slice(0, v4.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head, tail] = text.includes('::') ? text.split('::') : [text, undefined];
  const headGroups = head ? head.split(':') : [];
  const tailGroups = tail ? tail.split(':') : [];
  const fill = tail === undefined ? [] : Array(8 - headGroups.length - tailGroups.length).fill('0');
  return [...headGroups, ...fill, ...tailGroups].map((group) => group.padStart(4, '0')).join('');
};

/**
 * One `dns.servers` entry as node:dns `setServers` takes it: `1.2.3.4`, `1.2.3.4:5353`, `::1`
 * or `[::1]:5353`. Returns the reason when it is not one of these.
 */
export const dnsServerProblem = (entry: string): string | null => {
  const bracketed = entry.match(/^\[([^\]]+)\](?::(\d+))?$/);
  const plain = entry.match(/^([\d.]+)(?::(\d+))?$/);
  const [host, port] = bracketed ? [bracketed[1], bracketed[2]] : plain ? [plain[1], plain[2]] : [entry, undefined];
  if (isIP(host) === 0) return `"${entry}" is not an IP address with an optional port (1.2.3.4, 1.2.3.4:53, [::1]:53)`;
  if (port !== undefined && (Number(port) < 1 || Number(port) > 65535)) return `"${entry}" has a port outside 1..65535`;
  return null;
};

export type LookupByType = (name: string, type: string) => Promise<unknown>;

export interface AnswerCacheOptions {
  /** How long an answer, or a definite "no such record", is reused. */
  ttlMs: number;
  /** Answers kept at most; the oldest goes first. */
  maxEntries: number;
  /** Milliseconds on some steady clock. */
  now: () => number;
}

/**
 * Lookups that reuse an answer for `ttlMs`: the checks of received mail ask the same few
 * names (the sender domain's SPF, DKIM key and DMARC records) for message after message, and
 * each query costs the main thread more than the check that uses it. A lookup in flight is
 * shared, not asked twice. Definite answers are kept (records, and NXDOMAIN or no data,
 * RFC 2308); a failure that says nothing about the name (timeout, SERVFAIL, refused) is not,
 * so the next message asks again. node:dns gives no TTL for TXT records, so `ttlMs` is a
 * bound the operator's resolver's own caching sits behind: short, so a changed record is
 * seen within it.
 */
export const withAnswerCache = (lookup: LookupByType, options: AnswerCacheOptions): LookupByType => {
  const answers = new Map<string, { at: number; answer: Promise<unknown> }>();
  const forget = (key: string, answer: Promise<unknown>) => {
    if (answers.get(key)?.answer === answer) answers.delete(key);
  };
  return (name, type) => {
    const key = `${type.toUpperCase()} ${name.toLowerCase()}`;
    const now = options.now();
    const kept = answers.get(key);
    if (kept && now - kept.at < options.ttlMs) return kept.answer;
    if (kept) answers.delete(key);
    const answer = lookup(name, type);
    answer.catch((error: unknown) => {
      if (!isNoRecords(error)) forget(key, answer);
    });
    if (answers.size >= options.maxEntries) answers.delete(answers.keys().next().value as string);
    answers.set(key, { at: now, answer });
    return answer;
  };
};
