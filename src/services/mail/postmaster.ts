import type { MailboxRecord } from '../../store/accounts.js';
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

  /** The mailbox that receives `address` as a postmaster address; null for any other address. */
  mailboxFor(address: string): MailboxRecord | null {
    const at = address.lastIndexOf('@');
    if (at < 0 || address.slice(0, at).toLowerCase() !== 'postmaster') return null;
    const domain = address.slice(at + 1).toLowerCase();
    if (domain === this.mailDomain) return this.configured === undefined ? null : this.open(this.configured.toLowerCase());
    // A domain proven once keeps receiving (as its aliases do) until an owner deletes it.
    const held = this.store.domains.provenByName(domain);
    const holderMailbox = held ? this.store.accounts.mailboxOfAccount(held.holderId) : null;
    return holderMailbox ? this.store.accounts.mailboxByAddress(holderMailbox.address) : null;
  }

  private open(address: string): MailboxRecord | null {
    return this.store.accounts.mailboxByAddress(address) ?? this.store.domainAddresses.mailboxOfAlias(address);
  }
}
