import type { Clock } from '../../core/clock.js';
import { AppError } from '../../core/errors.js';
import type { MailboxRecord } from '../../store/accounts.js';
import type { DomainMailboxRecord } from '../../store/domain-addresses.js';
import type { Store } from '../../store/index.js';
import type { AccountService } from '../accounts/accounts.js';
import type { TwoFactorService } from '../access/two-factor.js';
import type { MessageOps } from '../mail/message-ops.js';
import { requireDomainRead, requireDomainWrite, type DomainCaller } from './caller.js';
import type { DomainService } from './domains.js';
import { newAddressOn, requireFreeAddress } from './local-part.js';
import type { DomainPlan } from './plan.js';

export interface DomainMailboxView {
  /** The mailbox's account id: its userId everywhere else. */
  id: string;
  email: string;
  agentId: string;
  createdAt: string;
  /** The full key: in the creation answer only, never again. */
  apiKey?: string;
}

export interface DomainMailboxDeleted extends DomainMailboxView {
  deleted: true;
  /** When its mail is removed; until then it is kept, and nothing can reach it. */
  mailRetainedUntil: string;
  aliasesRemoved: number;
  message: string;
}

const DAY_MS = 24 * 60 * 60 * 1000;
/** Deleted mailboxes purged per run; the rest wait for the next. */
const PURGE_BATCH = 20;

const viewOf = (mailbox: DomainMailboxRecord): DomainMailboxView => ({
  id: mailbox.accountId,
  email: mailbox.email,
  agentId: mailbox.agentId,
  createdAt: new Date(mailbox.createdAt).toISOString(),
});

/**
 * Separate mailboxes on a holder's verified domains: each a new agent account with its own
 * full key, credits and sending state, so REST, MCP, IMAP, submission and webhooks work for it
 * as for a registered agent. A deleted one stops at once (keys revoked, mailbox closed, webhook
 * revoked) and keeps its mail for `retentionDays`.
 */
export class DomainMailboxService {
  constructor(
    private readonly store: Store,
    private readonly clock: Clock,
    private readonly accounts: AccountService,
    private readonly twoFactor: TwoFactorService,
    private readonly domains: DomainService,
    private readonly plan: DomainPlan,
    private readonly retentionDays: number,
    private readonly ops: MessageOps,
  ) {}

  async list(caller: DomainCaller, domainId: string): Promise<{ mailboxes: DomainMailboxView[] }> {
    requireDomainRead(caller);
    await this.domains.owned(caller, domainId);
    return { mailboxes: (await this.store.domainAddresses.mailboxesOfDomain(domainId)).map(viewOf) };
  }

  async get(caller: DomainCaller, domainId: string, id: string): Promise<DomainMailboxView> {
    requireDomainRead(caller);
    return viewOf(await this.owned(caller, domainId, id));
  }

  async create(caller: DomainCaller, domainId: string, input: { localPart: string; agentId?: string }): Promise<DomainMailboxView> {
    requireDomainWrite(caller);
    return await this.store.transaction(async () => {
      const domain = await this.domains.owned(caller, domainId);
      await this.plan.requireAddressRoom(domain, await this.store.domains.ofHolder(caller.holderId));
      await this.plan.requireMailboxRoom(caller.holderId);
      const address = newAddressOn(input.localPart, domain.domain);
      await requireFreeAddress(this.store, address);
      const { account, apiKey } = await this.accounts.createOnAddress(input.agentId ?? address.slice(0, address.indexOf('@')), address);
      // A human holder owns the mailboxes made on its domains: they appear in its console.
      if ((await this.store.accounts.byId(caller.holderId))?.kind === 'human') await this.store.accounts.setOwner(account.id, caller.holderId);
      await this.store.domainAddresses.insertMailbox({ accountId: account.id, domainId, holderId: caller.holderId, createdAt: account.createdAt });
      return { id: account.id, email: account.email, agentId: account.agentId, createdAt: new Date(account.createdAt).toISOString(), apiKey };
    });
  }

  /** Needs the holder's factor code when two-factor is on (as revoking a key does). */
  async delete(caller: DomainCaller, domainId: string, id: string, factorCode: string | undefined): Promise<DomainMailboxDeleted> {
    requireDomainWrite(caller);
    const mailbox = await this.owned(caller, domainId, id);
    await this.twoFactor.requireFactorIfEnabled(caller.holderId, factorCode);
    const now = this.clock.now().getTime();
    const retainedUntil = now + this.retentionDays * DAY_MS;
    const aliasesRemoved = await this.store.transaction(async () => {
      if (!(await this.store.domainAddresses.markMailboxDeleted(id, now, retainedUntil))) throw new AppError('not_found', 'no such mailbox');
      const open = await this.store.accounts.mailboxOfAccount(id);
      const removed = open ? await this.store.domainAddresses.deleteAliasesToMailbox(open.id) : 0;
      await this.store.accounts.closeMailboxesOf(id, now);
      await this.store.keys.revokeAllOf(id, now);
      const webhook = await this.store.webhookEndpoints.currentOfAccount(id);
      if (webhook) await this.store.webhookEndpoints.revoke(webhook.id, now);
      return removed;
    });
    const until = new Date(retainedUntil).toISOString();
    return {
      ...viewOf(mailbox),
      deleted: true,
      mailRetainedUntil: until,
      aliasesRemoved,
      message: `${mailbox.email} is deleted: it receives nothing, its keys are revoked, and its mail is kept until ${until}, then removed.`,
    };
  }

  /**
   * Removes the mail of deleted mailboxes whose retention has passed (housekeeping): every
   * message of every folder, as an expunge does. The account and its address stay, so the
   * address is never given to anyone else. Returns how many mailboxes were purged.
   */
  async purgeDue(): Promise<number> {
    const now = this.clock.now().getTime();
    const due = await this.store.domainAddresses.duePurges(now, PURGE_BATCH);
    for (const accountId of due) {
      await this.store.transaction(async () => {
        for (const mailbox of await this.store.accounts.allMailboxesOf(accountId)) {
          for (const folder of await this.store.folders.listOfMailbox(mailbox.id))
            await this.ops.expunge(mailbox, folder, await this.store.imap.uidsAfter(folder.id, 0));
        }
        await this.store.domainAddresses.markPurged(accountId, now);
      });
    }
    return due.length;
  }

  /**
   * A mailbox the holder may point an alias at: its own, one of its domain mailboxes (not
   * deleted), or one of the agents it owns.
   */
  async manageable(holderId: string, address: string): Promise<MailboxRecord | null> {
    const mailbox = await this.store.accounts.mailboxByAddress(address);
    if (!mailbox) return null;
    if (mailbox.accountId === holderId) return mailbox;
    // An agent a human holder owns (claimed, or made on its domains) is the holder's to point at.
    if ((await this.store.accounts.byId(mailbox.accountId))?.ownerId === holderId) return mailbox;
    const domainMailbox = await this.store.domainAddresses.mailboxById(mailbox.accountId);
    return domainMailbox && domainMailbox.holderId === holderId && domainMailbox.deletedAt === null ? mailbox : null;
  }

  private async owned(caller: DomainCaller, domainId: string, id: string): Promise<DomainMailboxRecord> {
    await this.domains.owned(caller, domainId);
    const mailbox = await this.store.domainAddresses.mailboxById(id);
    if (!mailbox || mailbox.domainId !== domainId || mailbox.deletedAt !== null) throw new AppError('not_found', 'no such mailbox');
    return mailbox;
  }
}
