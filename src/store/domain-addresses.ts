import type { MailboxRecord } from './accounts.js';
import { Repo } from './repo.js';

export interface AliasRecord {
  id: string;
  domainId: string;
  holderId: string;
  address: string;
  mailboxId: string;
  /** The address of the mailbox the alias delivers to. */
  mailboxAddress: string;
  createdAt: number;
}

export interface DomainMailboxRecord {
  /** The mailbox's account id (its userId). */
  accountId: string;
  domainId: string;
  holderId: string;
  email: string;
  agentId: string;
  createdAt: number;
  deletedAt: number | null;
  purgeAfter: number | null;
}

const ALIAS_COLUMNS = `a.id, a.domain_id AS domainId, a.holder_id AS holderId, a.address, a.mailbox_id AS mailboxId,
  m.address AS mailboxAddress, a.created_at AS createdAt`;
const MAILBOX_COLUMNS = `d.account_id AS accountId, d.domain_id AS domainId, d.holder_id AS holderId, acc.email, acc.agent_id AS agentId,
  d.created_at AS createdAt, d.deleted_at AS deletedAt, d.purge_after AS purgeAfter`;

/** Aliases and separate mailboxes on custom domains (migration 60). */
export class DomainAddressRepo extends Repo {
  insertAlias(alias: Omit<AliasRecord, 'mailboxAddress'>): void {
    this.sql(
      `INSERT INTO domain_aliases (id, domain_id, holder_id, address, mailbox_id, created_at)
       VALUES (@id, @domainId, @holderId, @address, @mailboxId, @createdAt)`,
    ).run(alias);
  }

  aliasById(id: string): AliasRecord | null {
    return (
      (this.sql(`SELECT ${ALIAS_COLUMNS} FROM domain_aliases a JOIN mailboxes m ON m.id = a.mailbox_id WHERE a.id = ?`).get(id) as AliasRecord | undefined) ??
      null
    );
  }

  aliasesOfDomain(domainId: string): AliasRecord[] {
    return this.sql(
      `SELECT ${ALIAS_COLUMNS} FROM domain_aliases a JOIN mailboxes m ON m.id = a.mailbox_id WHERE a.domain_id = ? ORDER BY a.created_at, a.id`,
    ).all(domainId) as AliasRecord[];
  }

  countAliasesOfHolder(holderId: string): number {
    return (this.sql('SELECT COUNT(*) AS n FROM domain_aliases WHERE holder_id = ?').get(holderId) as { n: number }).n;
  }

  /**
   * The open mailbox an alias address delivers to (inbound RCPT). One indexed lookup by
   * address; a closed target receives nothing.
   */
  mailboxOfAlias(address: string): MailboxRecord | null {
    const row = this.sql(
      `SELECT m.id, m.account_id AS accountId, m.address FROM domain_aliases a JOIN mailboxes m ON m.id = a.mailbox_id
       WHERE a.address = ? AND m.closed_at IS NULL`,
    ).get(address) as MailboxRecord | undefined;
    return row ?? null;
  }

  /** Whether `address` is an alias of the account's mailbox (the From rule of a send). */
  isAliasOfAccount(accountId: string, address: string): boolean {
    return (
      this.sql('SELECT 1 FROM domain_aliases a JOIN mailboxes m ON m.id = a.mailbox_id WHERE a.address = ? AND m.account_id = ?').get(address, accountId) !==
      undefined
    );
  }

  aliasExists(address: string): boolean {
    return this.sql('SELECT 1 FROM domain_aliases WHERE address = ?').get(address) !== undefined;
  }

  deleteAlias(id: string): boolean {
    return this.sql('DELETE FROM domain_aliases WHERE id = ?').run(id).changes === 1;
  }

  deleteAliasesOfDomain(domainId: string): number {
    return this.sql('DELETE FROM domain_aliases WHERE domain_id = ?').run(domainId).changes;
  }

  deleteAliasesToMailbox(mailboxId: string): number {
    return this.sql('DELETE FROM domain_aliases WHERE mailbox_id = ?').run(mailboxId).changes;
  }

  insertMailbox(mailbox: { accountId: string; domainId: string; holderId: string; createdAt: number }): void {
    this.sql('INSERT INTO domain_mailboxes (account_id, domain_id, holder_id, created_at) VALUES (@accountId, @domainId, @holderId, @createdAt)').run(mailbox);
  }

  /** A domain mailbox, deleted or not (a deleted one is kept until it is purged). */
  mailboxById(accountId: string): DomainMailboxRecord | null {
    return (
      (this.sql(`SELECT ${MAILBOX_COLUMNS} FROM domain_mailboxes d JOIN accounts acc ON acc.id = d.account_id WHERE d.account_id = ?`).get(accountId) as
        | DomainMailboxRecord
        | undefined) ?? null
    );
  }

  /** The domain's mailboxes that are not deleted. */
  mailboxesOfDomain(domainId: string): DomainMailboxRecord[] {
    return this.sql(
      `SELECT ${MAILBOX_COLUMNS} FROM domain_mailboxes d JOIN accounts acc ON acc.id = d.account_id
       WHERE d.domain_id = ? AND d.deleted_at IS NULL ORDER BY d.created_at, d.account_id`,
    ).all(domainId) as DomainMailboxRecord[];
  }

  /** The holder's domain mailboxes that are not deleted (a deleted one no longer counts against the plan). */
  mailboxesOfHolder(holderId: string): DomainMailboxRecord[] {
    return this.sql(
      `SELECT ${MAILBOX_COLUMNS} FROM domain_mailboxes d JOIN accounts acc ON acc.id = d.account_id
       WHERE d.holder_id = ? AND d.deleted_at IS NULL ORDER BY d.created_at, d.account_id`,
    ).all(holderId) as DomainMailboxRecord[];
  }

  markMailboxDeleted(accountId: string, at: number, purgeAfter: number): boolean {
    return (
      this.sql('UPDATE domain_mailboxes SET deleted_at = ?, purge_after = ? WHERE account_id = ? AND deleted_at IS NULL').run(at, purgeAfter, accountId)
        .changes === 1
    );
  }

  /** Deleted mailboxes whose retention has passed and whose mail is still there. */
  duePurges(now: number, limit: number): string[] {
    return (
      this.sql('SELECT account_id AS id FROM domain_mailboxes WHERE purge_after <= ? AND purged_at IS NULL ORDER BY purge_after LIMIT ?').all(now, limit) as {
        id: string;
      }[]
    ).map((row) => row.id);
  }

  markPurged(accountId: string, at: number): void {
    this.sql('UPDATE domain_mailboxes SET purged_at = ? WHERE account_id = ?').run(at, accountId);
  }
}
