import type { Account, AccountKind, AccountStatus, SendingState } from '../core/types.js';
import { Repo } from './repo.js';

interface AccountRow {
  id: string;
  agent_id: string;
  name: string | null;
  email: string;
  credits: number;
  status: AccountStatus;
  sending_state: SendingState;
  created_at: number;
  kind: AccountKind;
  owner_id: string | null;
}

const toAccount = (row: AccountRow): Account => ({
  id: row.id,
  agentId: row.agent_id,
  name: row.name,
  email: row.email,
  credits: row.credits,
  status: row.status,
  sendingState: row.sending_state,
  createdAt: row.created_at,
  kind: row.kind,
  ownerId: row.owner_id,
});

export interface NewMailbox {
  id: string;
  accountId: string;
  address: string;
  createdAt: number;
}

export interface MailboxRecord {
  id: string;
  accountId: string;
  address: string;
}

export class AccountRepo extends Repo {
  insert(account: Account): void {
    this.sql(
      `INSERT INTO accounts (id, agent_id, name, email, credits, status, sending_state, created_at, kind, owner_id)
         VALUES (@id, @agentId, @name, @email, @credits, @status, @sendingState, @createdAt, @kind, @ownerId)`,
    ).run(account);
  }

  byId(id: string): Account | null {
    const row = this.sql('SELECT * FROM accounts WHERE id = ?').get(id) as AccountRow | undefined;
    return row ? toAccount(row) : null;
  }

  byEmail(email: string): Account | null {
    const row = this.sql('SELECT * FROM accounts WHERE email = ?').get(email) as AccountRow | undefined;
    return row ? toAccount(row) : null;
  }

  list(): Account[] {
    const rows = this.sql('SELECT * FROM accounts ORDER BY created_at, id').all() as AccountRow[];
    return rows.map(toAccount);
  }

  /** Adds (or with a negative amount, takes) credits; the CHECK constraint keeps them >= 0. */
  addCredits(id: string, amount: number): number | null {
    const row = this.sql('UPDATE accounts SET credits = credits + ? WHERE id = ? RETURNING credits').get(amount, id) as { credits: number } | undefined;
    return row ? row.credits : null;
  }

  /**
   * Takes `amount` credits only when the balance covers them; false (nothing taken) when
   * it does not. Credits never go negative (the CHECK constraint is the backstop).
   */
  reserveCredits(id: string, amount: number): boolean {
    return this.sql('UPDATE accounts SET credits = credits - ? WHERE id = ? AND credits >= ?').run(amount, id, amount).changes === 1;
  }

  /** Agents owned by `ownerId`, oldest first. */
  ownedBy(ownerId: string): Account[] {
    const rows = this.sql("SELECT * FROM accounts WHERE owner_id = ? AND kind = 'agent' ORDER BY created_at, id").all(ownerId) as AccountRow[];
    return rows.map(toAccount);
  }

  /**
   * The accounts that share one daily sending cap with `id` (src/services/sending/send-limits.ts):
   * the group's root is the account's owner, else the root of the holder whose domain mailbox
   * it is, else the account itself; the group is the root, the agents it owns, and every
   * domain mailbox (deleted ones too) that the root or one of those agents holds. An account
   * in no group is alone in its answer.
   */
  senderGroup(id: string): Account[] {
    const rows = this.sql(
      `WITH root(id) AS (
         SELECT COALESCE(
           (SELECT owner_id FROM accounts WHERE id = @id),
           (SELECT COALESCE(h.owner_id, h.id) FROM domain_mailboxes m JOIN accounts h ON h.id = m.holder_id WHERE m.account_id = @id),
           @id)),
       holders(id) AS (SELECT id FROM root UNION SELECT a.id FROM accounts a WHERE a.owner_id = (SELECT id FROM root))
       SELECT * FROM accounts WHERE id IN (
         SELECT id FROM holders UNION SELECT account_id FROM domain_mailboxes WHERE holder_id IN (SELECT id FROM holders))
       ORDER BY created_at, id`,
    ).all({ id }) as AccountRow[];
    return rows.map(toAccount);
  }

  /** Sets the owner of an unowned agent; false when it has one already (an agent has at most one). */
  setOwner(id: string, ownerId: string): boolean {
    return this.sql("UPDATE accounts SET owner_id = ? WHERE id = ? AND kind = 'agent' AND owner_id IS NULL").run(ownerId, id).changes === 1;
  }

  setSendingState(id: string, state: SendingState): boolean {
    return this.sql('UPDATE accounts SET sending_state = ? WHERE id = ?').run(state, id).changes === 1;
  }

  insertMailbox(mailbox: NewMailbox): void {
    this.sql('INSERT INTO mailboxes (id, account_id, address, created_at) VALUES (@id, @accountId, @address, @createdAt)').run(mailbox);
  }

  mailboxOfAccount(accountId: string): MailboxRecord | null {
    const row = this.sql('SELECT id, account_id AS accountId, address FROM mailboxes WHERE account_id = ? ORDER BY created_at LIMIT 1').get(accountId) as
      | MailboxRecord
      | undefined;
    return row ?? null;
  }

  /** The open mailbox with this address; a closed one (a deleted domain mailbox) receives nothing. */
  mailboxByAddress(address: string): MailboxRecord | null {
    const row = this.sql('SELECT id, account_id AS accountId, address FROM mailboxes WHERE address = ? AND closed_at IS NULL').get(address) as
      | MailboxRecord
      | undefined;
    return row ?? null;
  }

  /** Whether any mailbox, open or closed, holds the address (it stays taken until its row goes). */
  addressTaken(address: string): boolean {
    return this.sql('SELECT 1 FROM mailboxes WHERE address = ?').get(address) !== undefined;
  }

  /** Every mailbox of an account, closed ones too (a deleted domain mailbox's mail is purged from them). */
  allMailboxesOf(accountId: string): MailboxRecord[] {
    return this.sql('SELECT id, account_id AS accountId, address FROM mailboxes WHERE account_id = ? ORDER BY id').all(accountId) as MailboxRecord[];
  }

  closeMailboxesOf(accountId: string, at: number): number {
    return this.sql('UPDATE mailboxes SET closed_at = ? WHERE account_id = ? AND closed_at IS NULL').run(at, accountId).changes;
  }
}
