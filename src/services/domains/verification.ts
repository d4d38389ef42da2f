import type { Clock } from '../../core/clock.js';
import type { DnsResolver } from '../../core/dns.js';
import type { Logger } from '../../core/logger.js';
import type { DomainRecord, DomainStatus } from '../../store/domains.js';
import type { Store } from '../../store/index.js';
import type { RateLimiter } from '../access/rate-limiter.js';
import { requireDomainWrite, type DomainCaller } from './caller.js';
import { checkRecords, type Checked, type CheckResult } from './checks.js';
import type { DomainService } from './domains.js';

export interface VerifyResult {
  /** Ownership TXT and MX both check out (the domain's status is `verified`). */
  verified: boolean;
  status: DomainStatus;
  statusReason: string | null;
  results: CheckResult[];
}

export interface RecheckSummary {
  checked: number;
  verified: number;
  failed: number;
  pending: number;
}

const HOUR_MS = 60 * 60 * 1000;
/** Each verify asks DNS about eight names; a holder's scripts need not ask more often than this. */
const VERIFY_RULE = { bucket: 'domain-verify', limit: 60, windowMs: HOUR_MS, message: 'too many verifications of your domains; try again later' };

/**
 * Looks a domain's records up over the service's resolver and records the outcome. Ownership
 * TXT plus MX make it `verified`. A definite answer without them makes it `pending`, or
 * `failed` once it had been verified (it then takes no new addresses; existing ones keep
 * working). A lookup that times out or fails at the server says nothing about the zone, so
 * the status stays as it was and the result's detail says why.
 */
export class DomainVerificationService {
  constructor(
    private readonly store: Store,
    private readonly clock: Clock,
    private readonly logger: Logger,
    private readonly dns: DnsResolver,
    private readonly domains: DomainService,
    private readonly rateLimiter: RateLimiter,
    private readonly hostname: string,
  ) {}

  async verify(caller: DomainCaller, id: string): Promise<VerifyResult> {
    requireDomainWrite(caller);
    const domain = await this.domains.owned(caller, id);
    await this.rateLimiter.take(VERIFY_RULE, caller.holderId);
    const checked = await checkRecords(this.dns, await this.domains.expected(domain), this.hostname);
    return (
      (await this.record(domain.id, checked)) ?? {
        verified: false,
        status: domain.status,
        statusReason: 'the domain was deleted meanwhile',
        results: checked.map((item) => item.result),
      }
    );
  }

  /**
   * The daily job: every live domain again, one at a time (each check asks up to ten names at
   * once), so DNS answers that changed later are seen. A domain that fails here tells the
   * holder why in its list entry and the console.
   */
  async recheckAll(): Promise<RecheckSummary> {
    const summary: RecheckSummary = { checked: 0, verified: 0, failed: 0, pending: 0 };
    for (const domain of await this.store.domains.live()) {
      const checked = await checkRecords(this.dns, await this.domains.expected(domain), this.hostname);
      const outcome = await this.record(domain.id, checked);
      if (!outcome) continue;
      summary.checked += 1;
      summary[outcome.status] += 1;
      if (domain.status === 'verified' && outcome.status === 'failed') {
        this.logger.info('domain no longer verified', { domain: domain.domain, reason: outcome.statusReason });
      }
    }
    return summary;
  }

  /** Applies a check to the domain as it is now (it may have changed or gone during the lookups). */
  private async record(id: string, checked: Checked[]): Promise<VerifyResult | null> {
    const results = checked.map((item) => item.result);
    return await this.store.transaction(async () => {
      const domain = await this.store.domains.byId(id);
      if (!domain) return null;
      const { status, statusReason } = await this.judge(domain, checked);
      await this.store.domains.recordCheck(
        id,
        { status, statusReason, resultsJson: JSON.stringify(results), checkedAt: this.clock.now().getTime() },
        status === 'verified',
      );
      return { verified: status === 'verified', status, statusReason, results };
    });
  }

  private async judge(domain: DomainRecord, checked: Checked[]): Promise<{ status: DomainStatus; statusReason: string | null }> {
    const required = checked.filter((item) => item.record.required);
    const failing = required.filter((item) => !item.result.ok);
    const reason = failing.map((item) => `${item.record.kind === 'mx' ? 'MX' : 'ownership TXT'}: ${item.result.detail}`).join('; ');
    if (failing.length === 0) {
      const holder = await this.store.domains.provenByName(domain.domain);
      if (holder && holder.id !== domain.id) return { status: 'pending', statusReason: `${domain.domain} is verified by another account` };
      return { status: 'verified', statusReason: null };
    }
    if (failing.some((item) => !item.definite)) {
      // Nothing definite was learned: the status stands.
      return { status: domain.status, statusReason: domain.status === 'verified' ? null : reason };
    }
    return { status: domain.verifiedAt === null ? 'pending' : 'failed', statusReason: reason };
  }
}
