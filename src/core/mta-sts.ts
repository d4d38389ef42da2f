/**
 * MTA-STS (RFC 8461) shapes shared by the delivery service (which decides), the store (which
 * caches policies) and the HTTPS adapter (which fetches them).
 */

export type StsMode = 'enforce' | 'testing' | 'none';

export interface StsPolicy {
  /** The `id` of the `_mta-sts` TXT record the policy was fetched under (section 3.1). */
  id: string;
  mode: StsMode;
  /** Lowercase patterns: a host name, or `*.` and a domain (section 4.1). */
  mx: string[];
  /** Seconds the policy may be cached, at most 31557600 (section 3.2). */
  maxAge: number;
}

/** A policy as the store keeps it: with when it was fetched (ms since the epoch). */
export type CachedStsPolicy = StsPolicy & { fetchedAt: number };

/** Fetches a domain's policy file; rejects with the reason when there is no usable answer. */
export interface MtaStsFetcher {
  /** GET https://mta-sts.<domain>/.well-known/mta-sts.txt (section 3.3): the body of a 200 text/plain answer. */
  fetchPolicy(domain: string): Promise<string>;
}
