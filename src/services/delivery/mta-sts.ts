import type { Clock } from '../../core/clock.js';
import type { Logger } from '../../core/logger.js';
import type { CachedStsPolicy, MtaStsFetcher, StsPolicy } from '../../core/mta-sts.js';
import type { Store } from '../../store/index.js';
import { mxMatches, parsePolicy, stsRecordId } from './mta-sts-policy.js';

/** What the policy lookup needs of DNS: the TXT record `_mta-sts.<domain>`. */
export interface TxtResolver {
  resolveTxt(name: string): Promise<string[][]>;
}

/**
 * What a domain's policy asks of one delivery (RFC 8461 section 5): nothing (none, or no
 * policy); enforce: TLS with a certificate that verifies, to the mail servers the policy
 * names only; testing: delivery as without a policy, with what enforce would refuse reported.
 */
export type StsDecision = { mode: 'none' } | { mode: 'enforce' | 'testing'; policyId: string; allowed: string[] };

/**
 * A domain's TXT record is asked again at most this often (RFC 8461 section 5.1 lets senders
 * limit the checks); a domain without a policy is asked again after the same time.
 */
const RECHECK_MS = 10 * 60 * 1000;
/** Remembered checks are pruned past this many domains. */
const MAX_REMEMBERED = 10_000;

/**
 * MTA-STS policies of recipient domains (RFC 8461): discovered through the TXT record,
 * fetched over HTTPS, kept in the store until their max_age runs out (so a restart cannot be
 * used to downgrade), and fetched again when the record's id changes.
 */
export class MtaStsService {
  private readonly checked = new Map<string, number>();
  /** Lookups under way: batches to the same domain at once share one. */
  private readonly pending = new Map<string, Promise<StsPolicy | null>>();

  constructor(
    private readonly store: Store,
    private readonly dns: TxtResolver,
    private readonly fetcher: MtaStsFetcher,
    private readonly clock: Clock,
    private readonly logger: Logger,
  ) {}

  /** `exchanges`: the domain's mail servers by preference. */
  async decide(domain: string, exchanges: string[]): Promise<StsDecision> {
    const policy = await this.policyFor(domain);
    if (!policy || policy.mode === 'none') return { mode: 'none' };
    const allowed = exchanges.filter((exchange) => mxMatches(policy, exchange));
    if (policy.mode === 'testing') {
      // Section 5: deliver as without a policy; what enforce would refuse is reported.
      const unnamed = exchanges.filter((exchange) => !allowed.includes(exchange));
      if (unnamed.length > 0)
        this.logger.warn('mta-sts testing policy does not name these mail servers; enforce would not use them', { domain, id: policy.id, unnamed });
    }
    return { mode: policy.mode, policyId: policy.id, allowed };
  }

  /**
   * The policy in force for mail to `domain`, or null when it has none (section 5). One look
   * per domain at a time, from the cache read on: callers meanwhile wait for the same answer.
   */
  policyFor(domain: string): Promise<StsPolicy | null> {
    const under = this.pending.get(domain);
    if (under) return under;
    const lookup = this.lookUp(domain, this.clock.now().getTime()).finally(() => this.pending.delete(domain));
    this.pending.set(domain, lookup);
    return lookup;
  }

  private async lookUp(domain: string, now: number): Promise<StsPolicy | null> {
    const cached = await this.store.mtaSts.get(domain, now);
    const last = this.checked.get(domain);
    if (last !== undefined && now - last < RECHECK_MS) return cached;
    this.remember(domain, now);
    return await this.refresh(domain, cached, now);
  }

  private async refresh(domain: string, cached: CachedStsPolicy | null, now: number): Promise<StsPolicy | null> {
    const id = await this.announcedId(domain);
    // Section 5.1: no record (or no answer) while a policy is cached: the cached one applies.
    if (id === null) return cached;
    if (cached?.id === id && !halfSpent(cached, now)) return cached;
    const fetched = await this.fetch(domain, id);
    if (!fetched) return cached;
    await this.store.mtaSts.put(domain, fetched, now);
    return fetched;
  }

  private async announcedId(domain: string): Promise<string | null> {
    try {
      return stsRecordId(await this.dns.resolveTxt(`_mta-sts.${domain}`));
    } catch {
      // No record, or DNS failed: both read as "no new policy announced".
      return null;
    }
  }

  /** Section 3.3: a policy that cannot be fetched or parsed is no policy; the cached one, if any, stays. */
  private async fetch(domain: string, id: string): Promise<StsPolicy | null> {
    try {
      const policy = parsePolicy(await this.fetcher.fetchPolicy(domain), id);
      this.logger.info('mta-sts policy fetched', { domain, id, mode: policy.mode, mx: policy.mx, maxAge: policy.maxAge });
      return policy;
    } catch (error) {
      this.logger.warn('mta-sts policy not usable', { domain, id, error: error instanceof Error ? error.message : String(error) });
      return null;
    }
  }

  private remember(domain: string, now: number): void {
    if (this.checked.size >= MAX_REMEMBERED) {
      for (const [name, at] of this.checked) if (now - at >= RECHECK_MS) this.checked.delete(name);
    }
    this.checked.set(domain, now);
  }
}

/**
 * An unchanged policy is fetched again once half its max_age has passed, and a successful
 * fetch restarts its max_age: a policy in steady use never runs out, so an attacker who blocks
 * the policy host (or the TXT record) around its expiry cannot strip it (RFC 8461 section 10).
 */
const halfSpent = (policy: CachedStsPolicy, now: number): boolean => now - policy.fetchedAt >= (policy.maxAge * 1000) / 2;
