import ipaddr from 'ipaddr.js';

/**
 * The rule for every address the service connects out to on someone else's say-so (webhook
 * URLs, MX answers): only public unicast, never loopback, private, link-local, carrier-grade
 * NAT, the metadata address 169.254.169.254 or any other special-purpose range.
 */

/** IPv6 global unicast, RFC 4291 section 2.4: anything outside it is not a public host. */
const GLOBAL_UNICAST_V6 = ipaddr.parseCIDR('2000::/3');

/**
 * ipaddr.js names every special-purpose range (loopback, private, linkLocal,
 * carrierGradeNat, multicast, reserved, unspecified, broadcast, ipv4Mapped, rfc6052 NAT64,
 * 6to4, teredo, uniqueLocal, ...); only plain "unicast" is public. IPv6 must also be global
 * unicast, which refuses IPv4-compatible forms such as ::7f00:1.
 */
export const isPublicAddress = (address: ipaddr.IPv4 | ipaddr.IPv6): boolean => {
  if (address.range() !== 'unicast') return false;
  if (address.kind() === 'ipv6') return (address as ipaddr.IPv6).match(GLOBAL_UNICAST_V6);
  return true;
};

export const isLoopback = (address: ipaddr.IPv4 | ipaddr.IPv6): boolean => {
  const plain = address.kind() === 'ipv6' && (address as ipaddr.IPv6).isIPv4MappedAddress() ? (address as ipaddr.IPv6).toIPv4Address() : address;
  return plain.range() === 'loopback';
};

/**
 * Whether a resolver's answer may be connected to: public, or loopback when the operator
 * allowed it for local development and tests. Anything that does not parse is refused.
 */
export const mayConnectTo = (text: string, allowLoopback: boolean): boolean => {
  let address: ipaddr.IPv4 | ipaddr.IPv6;
  try {
    address = ipaddr.parse(text.replace(/%.*$/, ''));
  } catch {
    return false;
  }
  return isPublicAddress(address) || (allowLoopback && isLoopback(address));
};

/** RFC 6761 section 6.3: "localhost" and names under it are loopback by definition. */
export const isLocalName = (hostname: string): boolean => {
  const name = hostname.toLowerCase().replace(/\.$/, '');
  return name === 'localhost' || name.endsWith('.localhost');
};
