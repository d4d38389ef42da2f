/**
 * DNS only through an injected interface (docs/design.md "How it is tested"): the webhook target
 * check resolves a name once through it, and tests answer with whatever address they need.
 */
export interface AddressResolver {
  /** Every IPv4 and IPv6 address the name resolves to, as text; throws when it does not resolve. */
  resolveAddresses(hostname: string): Promise<string[]>;
}
