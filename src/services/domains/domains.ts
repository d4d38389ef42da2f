import { generateKeyPair } from 'node:crypto';
import { promisify } from 'node:util';
import type { Clock } from '../../core/clock.js';
import { isAtOrBelow, normalizeDomainName } from '../../core/domain-name.js';
import { AppError, invalidInput } from '../../core/errors.js';
import { newUuid, randomHex, randomLowerAlnum } from '../../core/ids.js';
import { seal } from '../../core/seal.js';
import type { DomainRecord } from '../../store/domains.js';
import type { Store } from '../../store/index.js';
import { requireDomainRead, requireDomainWrite, type DomainCaller } from './caller.js';
import type { CheckResult } from './checks.js';
import type { Hosting, HostingService } from './hosting.js';
import type { DomainPlan, Limits } from './plan.js';
import { expectedRecords, publicRecord, type DnsRecord, type ExpectedRecord, type RecordSettings } from './records.js';

export interface DomainView {
  id: string;
  domain: string;
  status: DomainRecord['status'];
  /** Why the domain is not (or no longer) verified; null when it is. */
  statusReason: string | null;
  records: DnsRecord[];
  /** The last check's results (verify or the daily re-check); empty before the first. */
  results: CheckResult[];
  canCreateAddresses: boolean;
  canCreateAddressesReason?: string;
  /**
   * required: an extra domain past the plan's included ones, which takes addresses only with
   * an add-on (kind domain_addon); expiresAt: when its add-on ends, null when it never had one.
   */
  addon: { required: boolean; expiresAt: string | null };
  checkedAt: string | null;
  verifiedAt: string | null;
  createdAt: string;
}

export interface DomainList {
  domains: DomainView[];
  canCreateAddresses: boolean;
  canCreateAddressesReason?: string;
  limits: Limits;
  hosting: Hosting;
}

export interface DomainDeleted {
  id: string;
  domain: string;
  deleted: true;
  aliasesRemoved: number;
}

export interface DomainsConfig extends RecordSettings {
  mailDomain: string;
  /** The service's secret key (secretsDir): seals each domain's DKIM private key. */
  secretKey: Buffer;
}

const generateRsa = promisify(generateKeyPair);
const iso = (ms: number | null): string | null => (ms === null ? null : new Date(ms).toISOString());

/** Adding, listing, reading and deleting a holder's custom domains (checks: verification.ts). */
export class DomainService {
  constructor(
    private readonly store: Store,
    private readonly clock: Clock,
    private readonly hosting: HostingService,
    private readonly plan: DomainPlan,
    private readonly config: DomainsConfig,
  ) {}

  async list(caller: DomainCaller): Promise<DomainList> {
    requireDomainRead(caller);
    const domains = await this.store.domains.ofHolder(caller.holderId);
    const verdict = await this.plan.listVerdict(caller.holderId, domains);
    return {
      domains: await Promise.all(await Promise.all(domains.map((domain) => this.view(domain, domains)))),
      canCreateAddresses: verdict.can,
      ...(verdict.reason ? { canCreateAddressesReason: verdict.reason } : {}),
      limits: await this.plan.limits(caller.holderId, domains),
      hosting: await this.hosting.hostingOf(caller.holderId),
    };
  }

  async get(caller: DomainCaller, id: string): Promise<DomainView> {
    requireDomainRead(caller);
    const domain = await this.owned(caller, id);
    return await this.view(domain, await this.store.domains.ofHolder(caller.holderId));
  }

  /** Adding a domain is free (docs/operators/domains.md). Its records, with a new DKIM key, are in the answer. */
  async add(caller: DomainCaller, input: { domain: string }): Promise<DomainView> {
    requireDomainWrite(caller);
    const name = this.acceptableName(input.domain);
    // RSA generation takes tens of milliseconds: on the thread pool, before the transaction.
    const { privateKey, publicKey } = await generateRsa('rsa', { modulusLength: 2048 });
    const id = newUuid();
    await this.store.transaction(async () => {
      const domains = await this.store.domains.ofHolder(caller.holderId);
      if (await this.store.domains.ofHolderByName(caller.holderId, name)) throw new AppError('conflict', `${name} is already one of your domains`);
      const holder = await this.store.domains.provenByName(name);
      if (holder) throw new AppError('conflict', `${name} is verified by another account`);
      await this.plan.requireRoomForDomain(caller.holderId, domains);
      await this.store.domains.insert({
        id,
        holderId: caller.holderId,
        domain: name,
        ownershipToken: randomHex(16),
        // A new selector per key, so a re-added domain never meets a cached old key (RFC 6376 section 3.1).
        dkimSelector: `ap${randomLowerAlnum(8)}`,
        dkimPrivateKey: seal(this.config.secretKey, privateKey.export({ type: 'pkcs8', format: 'pem' }).toString()),
        dkimPublicKey: publicKey.export({ type: 'spki', format: 'der' }).toString('base64'),
        // RFC 8461 section 3.1: 1 to 32 alphanumeric characters.
        mtaStsId: randomLowerAlnum(16),
        createdAt: this.clock.now().getTime(),
      });
    });
    // The answer to a write: a domains:write key without domains:read sees what it made.
    return await this.view(await this.owned(caller, id), await this.store.domains.ofHolder(caller.holderId));
  }

  /** Its aliases go with it; its mailboxes must be deleted first (each may need a 2FA code). */
  async delete(caller: DomainCaller, id: string): Promise<DomainDeleted> {
    requireDomainWrite(caller);
    return await this.store.transaction(async () => {
      const domain = await this.owned(caller, id);
      const mailboxes = (await this.store.domainAddresses.mailboxesOfDomain(id)).length;
      if (mailboxes > 0) {
        throw new AppError(
          'conflict',
          `${domain.domain} still has ${mailboxes} mailbox(es); delete them first (DELETE /api/user/domains/${id}/mailboxes/{mailboxId})`,
        );
      }
      const aliasesRemoved = await this.store.domainAddresses.deleteAliasesOfDomain(id);
      await this.store.domains.markDeleted(id, this.clock.now().getTime());
      return { id, domain: domain.domain, deleted: true as const, aliasesRemoved };
    });
  }

  /** The records to publish for a domain, with what each check looks for. */
  async expected(domain: DomainRecord): Promise<ExpectedRecord[]> {
    const reportAddress = (await this.store.accounts.mailboxOfAccount(domain.holderId))?.address ?? `postmaster@${this.config.mailDomain}`;
    return expectedRecords({ ...domain, reportAddress }, this.config);
  }

  /** A live domain of the caller's holder; another holder's is not found (its existence is not told). */
  async owned(caller: DomainCaller, id: string): Promise<DomainRecord> {
    const domain = await this.store.domains.byId(id);
    if (!domain || domain.holderId !== caller.holderId) throw new AppError('not_found', 'no such domain');
    return domain;
  }

  /** Verified domains, for the deployment checks (`agentpost doctor`). */
  async verifiedNames(): Promise<string[]> {
    return await this.store.domains.verifiedNames();
  }

  /**
   * The MTA-STS policy hosts (`mta-sts.<domain>`) of verified domains whose last check found
   * them pointing at this service: names for the certificate by ACME (src/tls/acme.ts). One
   * that points elsewhere would fail the CA's challenge, and with it the whole order.
   */
  async policyHostsHere(): Promise<string[]> {
    return (await this.store.domains.live())
      .filter((domain) => domain.status === 'verified' && domain.resultsJson)
      .flatMap((domain) => {
        const host = `mta-sts.${domain.domain}`;
        const results = JSON.parse(domain.resultsJson as string) as CheckResult[];
        return results.some((result) => result.name === host && result.ok) ? [host] : [];
      });
  }

  private acceptableName(input: string): string {
    const name = normalizeDomainName(input);
    if (name === null) throw invalidInput('domain', `"${input}" is not a domain name (give internationalized names in their xn-- form)`);
    if (isAtOrBelow(name, this.config.mailDomain)) throw invalidInput('domain', `${name} is this service's own mail domain`);
    return name;
  }

  private async view(domain: DomainRecord, domains: readonly DomainRecord[]): Promise<DomainView> {
    const blocker = await this.plan.addressBlocker(domain, domains);
    return {
      id: domain.id,
      domain: domain.domain,
      status: domain.status,
      statusReason: domain.status === 'verified' ? null : (domain.statusReason ?? 'not checked yet: publish the records, then verify'),
      records: (await this.expected(domain)).map(publicRecord),
      results: domain.resultsJson ? (JSON.parse(domain.resultsJson) as CheckResult[]) : [],
      canCreateAddresses: blocker === null,
      ...(blocker ? { canCreateAddressesReason: blocker.reason } : {}),
      addon: { required: this.plan.isExtra(domain, domains), expiresAt: iso(domain.addonExpiresAt) },
      checkedAt: iso(domain.checkedAt),
      verifiedAt: iso(domain.verifiedAt),
      createdAt: new Date(domain.createdAt).toISOString(),
    };
  }
}
