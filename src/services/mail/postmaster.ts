import type { Store } from '../../store/index.js';

/**
 * RFC 5321 section 4.5.1: a server MUST accept mail to "postmaster" (in any case) for every
 * domain it receives mail for, and RFC 2142 makes it the address for trouble with the mail
 * service. A postmaster@ address that is no mailbox or alias here goes to the domain's
 * administrator: on a custom domain, its holder's mailbox; on `mailDomain`, the mailbox that
 * `smtp.postmaster` names. With that unset it is refused, and `agentpost doctor` says so.
 */
export class PostmasterRoute {
  constructor(
    private readonly store: Store,
    private readonly mailDomain: string,
    /** `smtp.postmaster`: the address of a mailbox (or alias) here. */
    private readonly configured: string | undefined,
  ) {}

  /**
   * The address that receives `address` as a postmaster address, to be resolved as any
   * recipient is (MailboxService.mailboxForAddress); null for any other address.
   */
  async deliveredTo(address: string): Promise<string | null> {
    const at = address.lastIndexOf('@');
    if (at < 0 || address.slice(0, at).toLowerCase() !== 'postmaster') return null;
    const domain = address.slice(at + 1).toLowerCase();
    if (domain === this.mailDomain) return this.configured ?? null;
    // A domain proven once keeps receiving (as its aliases do) until an owner deletes it.
    const held = await this.store.domains.provenByName(domain);
    return held ? ((await this.store.accounts.mailboxOfAccount(held.holderId))?.address ?? null) : null;
  }
}
