import type { Clock } from '../../core/clock.js';
import { AppError } from '../../core/errors.js';
import type { Store } from '../../store/index.js';
import type { DomainRecord } from '../../store/domains.js';
import type { HostingService } from './hosting.js';

export interface PlanLimits {
  domains: number;
  aliases: number;
  mailboxes: number;
}

export interface Usage {
  used: number;
  allowed: number;
}

export interface Limits {
  domains: Usage;
  aliases: Usage;
  mailboxes: Usage;
}

export interface PlanConfig {
  /** `limits.personalPlan`. */
  plan: PlanLimits;
  /** `funding.paused`: hosting comes from operator grants only, which the reasons say. */
  fundingPaused: boolean;
}

/**
 * The plan rules (docs/operators/domains.md): adding and checking DNS are free; creating
 * addresses needs paid owner access (hosting) on a verified domain the plan covers; the Personal
 * plan includes `plan.domains` domains, `plan.aliases` aliases and `plan.mailboxes` separate
 * mailboxes per holder; extra domains need active hosting and a verified first domain, and an
 * add-on each.
 */
export class DomainPlan {
  constructor(
    private readonly store: Store,
    private readonly clock: Clock,
    private readonly hosting: HostingService,
    private readonly config: PlanConfig,
  ) {}

  async limits(holderId: string, domains: readonly DomainRecord[]): Promise<Limits> {
    const addons = domains.filter((domain) => this.hasAddon(domain)).length;
    return {
      domains: { used: domains.length, allowed: this.config.plan.domains + addons },
      aliases: { used: await this.store.domainAddresses.countAliasesOfHolder(holderId), allowed: this.config.plan.aliases },
      mailboxes: { used: (await this.store.domainAddresses.mailboxesOfHolder(holderId)).length, allowed: this.config.plan.mailboxes },
    };
  }

  /** Why no address can be made on `domain` now, or null when one can. `domains`: the holder's, oldest first. */
  async addressBlocker(domain: DomainRecord, domains: readonly DomainRecord[]): Promise<{ code: 'payment_required' | 'conflict'; reason: string } | null> {
    if (!(await this.hosting.isActive(domain.holderId))) return { code: 'payment_required', reason: await this.hostingReason(domain.holderId) };
    if (domain.status === 'pending') {
      return { code: 'conflict', reason: `${domain.domain} is not verified yet: publish its records, then POST /api/user/domains/${domain.id}/verify` };
    }
    if (domain.status === 'failed') {
      return {
        code: 'conflict',
        reason: `${domain.domain} no longer shows ownership (${domain.statusReason ?? 'see its records'}): existing addresses keep working; new ones need the records back and a verify`,
      };
    }
    if (this.isExtra(domain, domains) && !this.hasAddon(domain)) {
      return {
        code: 'payment_required',
        reason: `the plan includes ${this.config.plan.domains} domain(s); ${domain.domain} is an extra domain and needs a domain add-on (${await this.buyWhere(domain.holderId, 'domain_addon')})`,
      };
    }
    return null;
  }

  async requireAddressRoom(domain: DomainRecord, domains: readonly DomainRecord[]): Promise<void> {
    const blocker = await this.addressBlocker(domain, domains);
    if (blocker) throw new AppError(blocker.code, `cannot create addresses on ${domain.domain}: ${blocker.reason}`);
  }

  /** The list's canCreateAddresses: some domain of the holder takes new addresses now. */
  async listVerdict(holderId: string, domains: readonly DomainRecord[]): Promise<{ can: boolean; reason?: string }> {
    if (!(await this.hosting.isActive(holderId))) return { can: false, reason: await this.hostingReason(holderId) };
    if (domains.length === 0) return { can: false, reason: 'add a domain and verify it first (POST /api/user/domains)' };
    const blockers = await Promise.all(await Promise.all(domains.map((domain) => this.addressBlocker(domain, domains))));
    return blockers.some((blocker) => blocker === null) ? { can: true } : { can: false, reason: blockers[0]?.reason };
  }

  /** Extra domains require active hosting and a verified first domain (docs/operators/domains.md). */
  async requireRoomForDomain(holderId: string, domains: readonly DomainRecord[]): Promise<void> {
    if (domains.length < this.config.plan.domains) return;
    if (!(await this.hosting.isActive(holderId))) {
      throw new AppError(
        'payment_required',
        `the plan includes ${this.config.plan.domains} domain(s); an extra domain needs active hosting (${await this.hostingReason(holderId)})`,
      );
    }
    if (domains[0]?.status !== 'verified') {
      throw new AppError('conflict', `an extra domain needs your first domain${domains[0] ? `, ${domains[0].domain},` : ''} verified first`);
    }
  }

  async requireAliasRoom(holderId: string): Promise<void> {
    const used = await this.store.domainAddresses.countAliasesOfHolder(holderId);
    if (used >= this.config.plan.aliases) {
      throw new AppError('conflict', `the plan includes ${this.config.plan.aliases} aliases and ${used} are in use; delete one to add another`);
    }
  }

  async requireMailboxRoom(holderId: string): Promise<void> {
    const used = (await this.store.domainAddresses.mailboxesOfHolder(holderId)).length;
    if (used >= this.config.plan.mailboxes) {
      throw new AppError('conflict', `the plan includes ${this.config.plan.mailboxes} separate mailboxes and ${used} are in use; delete one to add another`);
    }
  }

  /**
   * Whether `domain` is an extra domain (past the plan's included ones, oldest first), and so
   * takes addresses only with an add-on of its own.
   */
  isExtra(domain: DomainRecord, domains: readonly DomainRecord[]): boolean {
    return domains.findIndex((candidate) => candidate.id === domain.id) >= this.config.plan.domains;
  }

  /**
   * An add-on is sold for a verified extra domain of the holder, never for one the plan
   * includes (docs/operators/domains.md, "Paid owner access and the plan").
   */
  async checkAddon(holderId: string, domainId: string): Promise<void> {
    const domains = await this.store.domains.ofHolder(holderId);
    const domain = domains.find((candidate) => candidate.id === domainId);
    if (!domain) throw new AppError('not_found', 'no such domain for this account');
    if (domain.status !== 'verified') {
      throw new AppError('conflict', `${domain.domain} is not verified: an add-on is sold for a verified domain; publish its records and verify it first`);
    }
    if (!this.isExtra(domain, domains)) {
      throw new AppError('conflict', `${domain.domain} is included in the plan (its first ${this.config.plan.domains} domain(s)); it needs no add-on`);
    }
  }

  private hasAddon(domain: DomainRecord): boolean {
    return domain.addonExpiresAt !== null && domain.addonExpiresAt > this.clock.now().getTime();
  }

  private async hostingReason(holderId: string): Promise<string> {
    return this.config.fundingPaused
      ? 'creating addresses needs paid hosting; payments are paused, so the operator grants it (agentpost hosting grant <email> <days>)'
      : `creating addresses needs paid hosting: ${await this.buyWhere(holderId, 'domain_hosting')}`;
  }

  /** Where this holder buys: an owner pays for itself in the console or over /api/user, an agent with its key. */
  private async buyWhere(holderId: string, kind: 'domain_hosting' | 'domain_addon'): Promise<string> {
    if (this.config.fundingPaused) return 'payments are paused on this server, so it cannot be bought now';
    return (await this.store.accounts.byId(holderId))?.kind === 'human'
      ? `buy it on the console's Billing page or with POST /api/user/payment (kind ${kind})`
      : `buy it with POST /api/v1/agent/payment (kind ${kind})`;
  }
}
