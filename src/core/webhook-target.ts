import ipaddr from 'ipaddr.js';
import type { AddressResolver } from './address-resolver.js';
import { isLocalName, isLoopback, isPublicAddress } from './public-address.js';

/**
 * Outgoing webhook requests are the service's attack surface (docs/design.md "Durability and
 * correctness", docs/agents/webhooks.md "Where a webhook may point"): only https on port 443
 * to a public address.
 * The name is resolved once here and the caller connects to `address`, never resolving
 * again, so a DNS answer that changes between check and connect cannot reach inside.
 */
export interface WebhookTarget {
  url: URL;
  /** The checked address to connect to. */
  address: string;
  family: 4 | 6;
}

export type TargetRefusalCode = 'invalid_url' | 'scheme_not_allowed' | 'port_not_allowed' | 'blocked_address' | 'dns_error';

export class TargetRefused extends Error {
  constructor(
    readonly code: TargetRefusalCode,
    message: string,
  ) {
    super(message);
    this.name = 'TargetRefused';
  }
}

export interface TargetPolicy {
  /** webhooks.allowInsecure: http, any port and loopback, for local development and tests only. */
  allowInsecure: boolean;
}

/** Parses and checks the URL's form only (no DNS): what a create request can be refused for at once. */
export const checkTargetUrl = (raw: string, policy: TargetPolicy): URL => {
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new TargetRefused('invalid_url', 'url is not an absolute URL');
  }
  const schemes = policy.allowInsecure ? ['https:', 'http:'] : ['https:'];
  if (!schemes.includes(url.protocol)) throw new TargetRefused('scheme_not_allowed', 'url must use https');
  // WHATWG URL drops a port equal to the scheme's default, so "" means 443 for https.
  if (!policy.allowInsecure && url.port !== '') throw new TargetRefused('port_not_allowed', 'url must use port 443');
  if (url.username !== '' || url.password !== '') throw new TargetRefused('invalid_url', 'url must not carry credentials');
  if (url.hostname === '') throw new TargetRefused('invalid_url', 'url has no host');
  if (!policy.allowInsecure && isLocalName(url.hostname)) throw new TargetRefused('blocked_address', 'url must name a public host');
  return url;
};

/** Checks the URL, resolves its host once and checks every address it resolves to. */
export const resolveWebhookTarget = async (raw: string, resolver: AddressResolver, policy: TargetPolicy): Promise<WebhookTarget> => {
  const url = checkTargetUrl(raw, policy);
  const host = url.hostname.replace(/^\[(.*)\]$/, '$1');
  // The WHATWG parser already turned decimal, octal and hex IPv4 forms (2130706433) into dotted quads.
  const addresses = ipaddr.isValid(host) ? [host] : await resolveName(resolver, host);
  if (addresses.length === 0) throw new TargetRefused('dns_error', 'the host does not resolve');
  const parsed = addresses.map(parseAddress);
  // Refuse when any answer is inside: a mixed answer must not let a retry land on the private one.
  for (const address of parsed) {
    if (!isPublicAddress(address) && !(policy.allowInsecure && isLoopback(address))) {
      throw new TargetRefused('blocked_address', 'the host resolves to an address that is not public');
    }
  }
  const chosen = parsed[0];
  return { url, address: chosen.toString(), family: chosen.kind() === 'ipv4' ? 4 : 6 };
};

const resolveName = async (resolver: AddressResolver, host: string): Promise<string[]> => {
  try {
    return await resolver.resolveAddresses(host);
  } catch {
    throw new TargetRefused('dns_error', 'the host does not resolve');
  }
};

const parseAddress = (text: string): ipaddr.IPv4 | ipaddr.IPv6 => {
  try {
    return ipaddr.parse(text.replace(/%.*$/, ''));
  } catch {
    throw new TargetRefused('dns_error', 'the resolver answered something that is not an address');
  }
};
