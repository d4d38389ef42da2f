/**
 * A DNS host name as the service stores it: lowercase letters, digits and hyphens in labels of
 * 1 to 63 octets that neither start nor end with a hyphen (RFC 1123 section 2.1), at least two
 * labels, at most 253 octets, no trailing dot. Internationalized names are given in their
 * A-label (punycode) form. The top label is never all-numeric (RFC 3696 section 2).
 */
const DOMAIN = /^(?!-)[a-z0-9-]{1,63}(?<!-)(\.(?!-)[a-z0-9-]{1,63}(?<!-))+$/;

/** The normalized name, or null when `input` is not a domain name. */
export const normalizeDomainName = (input: string): string | null => {
  const name = input.trim().toLowerCase().replace(/\.$/, '');
  if (name.length > 253 || !DOMAIN.test(name) || /^[0-9]+$/.test(name.slice(name.lastIndexOf('.') + 1))) return null;
  return name;
};

/** True when `name` is `parent` or a name below it. */
export const isAtOrBelow = (name: string, parent: string): boolean => name === parent || name.endsWith(`.${parent}`);
