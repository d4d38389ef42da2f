import type { Clock } from '../../core/clock.js';
import type { DnsResolver } from '../../core/dns.js';
import type { Logger } from '../../core/logger.js';
import type { Store } from '../../store/index.js';
import type { AccountService } from '../accounts/accounts.js';
import type { TwoFactorService } from '../access/two-factor.js';
import type { MessageOps } from '../mail/message-ops.js';
import type { RateLimiter } from '../access/rate-limiter.js';
import { AliasService } from './aliases.js';
import { DomainService } from './domains.js';
import { HostingService } from './hosting.js';
import { DomainMailboxService } from './mailboxes.js';
import { DomainPlan, type PlanLimits } from './plan.js';
import { mtaStsPolicy } from './records.js';
import { DomainVerificationService } from './verification.js';

/** Config `domains.*`, `limits.personalPlan` and `funding.paused`, as src/config/services-config.ts passes them. */
export interface DomainsSettings {
  /** `domains.spf`; unset: derived from the relay or the host name. */
  spf?: string;
  deletedMailboxRetentionDays: number;
  mtaStsMode: 'testing' | 'enforce';
  plan: PlanLimits;
  fundingPaused: boolean;
}

export interface DomainServiceDeps {
  store: Store;
  clock: Clock;
  logger: Logger;
  dns: DnsResolver;
  rateLimiter: RateLimiter;
  accounts: AccountService;
  twoFactor: TwoFactorService;
  /** Purging a deleted mailbox's mail removes its messages as an expunge does. */
  messageOps: MessageOps;
  settings: DomainsSettings;
  mailDomain: string;
  /** `smtp.hostname`: the MX target and the MTA-STS policy host. */
  hostname: string;
  /** `outbound.relay`, for the SPF mechanisms when `domains.spf` is unset. */
  relay?: string;
  secretKey: Buffer;
}

export interface DomainServices {
  domains: DomainService;
  domainVerification: DomainVerificationService;
  aliases: AliasService;
  domainMailboxes: DomainMailboxService;
  /** Paid access per holder: payments extend it (extendHosting), the domain rules read it (hostingOf). */
  hosting: HostingService;
  /** The plan's rules; payments ask it which domain an add-on may be sold for. */
  domainPlan: DomainPlan;
  /** The MTA-STS policy file for `mta-sts.<domain>`, or null when that is not a verified domain here. */
  mtaStsPolicyFor(host: string): Promise<string | null>;
}

/**
 * Where custom domains' mail leaves from (RFC 7208 section 5.3): the relay's host when one is
 * configured, else this host. An operator whose sending addresses differ says so in `domains.spf`.
 */
const spfMechanisms = (deps: DomainServiceDeps): string => {
  if (deps.settings.spf) return deps.settings.spf;
  if (deps.relay) return `a:${new URL(deps.relay).hostname}`;
  return `a:${deps.hostname}`;
};

export const createDomainServices = (deps: DomainServiceDeps): DomainServices => {
  const { store, clock, settings } = deps;
  const hosting = new HostingService(store, clock);
  const plan = new DomainPlan(store, clock, hosting, { plan: settings.plan, fundingPaused: settings.fundingPaused });
  const domains = new DomainService(store, clock, hosting, plan, {
    mailDomain: deps.mailDomain,
    hostname: deps.hostname,
    spfMechanisms: spfMechanisms(deps),
    secretKey: deps.secretKey,
  });
  const domainMailboxes = new DomainMailboxService(
    store,
    clock,
    deps.accounts,
    deps.twoFactor,
    domains,
    plan,
    settings.deletedMailboxRetentionDays,
    deps.messageOps,
  );
  return {
    domains,
    domainVerification: new DomainVerificationService(store, clock, deps.logger, deps.dns, domains, deps.rateLimiter, deps.hostname),
    aliases: new AliasService(store, clock, domains, plan, (holderId, address) => domainMailboxes.manageable(holderId, address)),
    domainMailboxes,
    hosting,
    domainPlan: plan,
    mtaStsPolicyFor: async (host) => {
      const name = host.toLowerCase().replace(/\.$/, '').replace(/:\d+$/, '');
      if (!name.startsWith('mta-sts.')) return null;
      const domain = name.slice('mta-sts.'.length);
      const served = domain === deps.mailDomain || (await store.domains.provenByName(domain))?.status === 'verified';
      return served ? mtaStsPolicy(deps.hostname, settings.mtaStsMode) : null;
    },
  };
};
