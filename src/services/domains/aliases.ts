import type { Clock } from '../../core/clock.js';
import { AppError } from '../../core/errors.js';
import { newUuid } from '../../core/ids.js';
import type { MailboxRecord } from '../../store/accounts.js';
import type { AliasRecord } from '../../store/domain-addresses.js';
import type { Store } from '../../store/index.js';
import { requireDomainRead, requireDomainWrite, type DomainCaller } from './caller.js';
import type { DomainService } from './domains.js';
import { newAddressOn, requireFreeAddress } from './local-part.js';
import type { DomainPlan } from './plan.js';

export interface AliasView {
  id: string;
  address: string;
  /** The address of the mailbox that receives the alias's mail and may send as it. */
  mailbox: string;
  createdAt: string;
}

export interface AliasDeleted extends AliasView {
  deleted: true;
}

const viewOf = (alias: AliasRecord): AliasView => ({
  id: alias.id,
  address: alias.address,
  mailbox: alias.mailboxAddress,
  createdAt: new Date(alias.createdAt).toISOString(),
});

/**
 * Aliases on a holder's verified domains: mail to one lands in its mailbox's INBOX (the MX
 * accepts it at RCPT), and that mailbox may send with it as From (docs/agents/sending.md, Sender).
 */
export class AliasService {
  constructor(
    private readonly store: Store,
    private readonly clock: Clock,
    private readonly domains: DomainService,
    private readonly plan: DomainPlan,
    /** The mailboxes a holder may point an alias at (its own, its domain mailboxes, its owned agents'). */
    private readonly targets: (holderId: string, address: string) => Promise<MailboxRecord | null>,
  ) {}

  async list(caller: DomainCaller, domainId: string): Promise<{ aliases: AliasView[] }> {
    requireDomainRead(caller);
    await this.domains.owned(caller, domainId);
    return { aliases: (await this.store.domainAddresses.aliasesOfDomain(domainId)).map(viewOf) };
  }

  async get(caller: DomainCaller, domainId: string, id: string): Promise<AliasView> {
    requireDomainRead(caller);
    return viewOf(await this.owned(caller, domainId, id));
  }

  async create(caller: DomainCaller, domainId: string, input: { localPart: string; mailbox: string }): Promise<AliasView> {
    requireDomainWrite(caller);
    const id = newUuid();
    await this.store.transaction(async () => {
      const domain = await this.domains.owned(caller, domainId);
      await this.plan.requireAddressRoom(domain, await this.store.domains.ofHolder(caller.holderId));
      await this.plan.requireAliasRoom(caller.holderId);
      const address = newAddressOn(input.localPart, domain.domain);
      await requireFreeAddress(this.store, address);
      const target = await this.targets(caller.holderId, input.mailbox.trim().toLowerCase());
      if (!target) throw new AppError('not_found', `${input.mailbox} is not a mailbox you manage (your own, a mailbox on your domains, or an agent you own)`);
      await this.store.domainAddresses.insertAlias({
        id,
        domainId,
        holderId: caller.holderId,
        address,
        mailboxId: target.id,
        createdAt: this.clock.now().getTime(),
      });
    });
    // The answer to a write: a domains:write key without domains:read sees what it made.
    return viewOf(await this.owned(caller, domainId, id));
  }

  async delete(caller: DomainCaller, domainId: string, id: string): Promise<AliasDeleted> {
    requireDomainWrite(caller);
    return await this.store.transaction(async () => {
      const alias = await this.owned(caller, domainId, id);
      await this.store.domainAddresses.deleteAlias(id);
      return { ...viewOf(alias), deleted: true as const };
    });
  }

  private async owned(caller: DomainCaller, domainId: string, id: string): Promise<AliasRecord> {
    await this.domains.owned(caller, domainId);
    const alias = await this.store.domainAddresses.aliasById(id);
    if (!alias || alias.domainId !== domainId) throw new AppError('not_found', 'no such alias');
    return alias;
  }
}
