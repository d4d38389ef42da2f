import { Repo } from './repo.js';

/** A human's sign-in (migration 030). */
export interface OwnerLogin {
  accountId: string;
  loginEmail: string;
  /** argon2id PHC string; null until the one-time link has been used. */
  passwordHash: string | null;
  passwordChangedAt: number | null;
  createdAt: number;
}

export interface OwnerSessionRecord {
  id: string;
  accountId: string;
  createdAt: number;
  expiresAt: number;
  endedAt: number | null;
}

const LOGIN_COLUMNS = `account_id AS accountId, login_email AS loginEmail, password_hash AS passwordHash,
  password_changed_at AS passwordChangedAt, created_at AS createdAt`;
const SESSION_COLUMNS = 'id, account_id AS accountId, created_at AS createdAt, expires_at AS expiresAt, ended_at AS endedAt';

/** Owner sign-ins, sessions, password links and claim codes; secrets only as SHA-256. */
export class OwnerRepo extends Repo {
  insertLogin(login: OwnerLogin): void {
    this.sql(
      `INSERT INTO owner_logins (account_id, login_email, password_hash, password_changed_at, created_at)
       VALUES (@accountId, @loginEmail, @passwordHash, @passwordChangedAt, @createdAt)`,
    ).run(login);
  }

  loginByEmail(loginEmail: string): OwnerLogin | null {
    return (this.sql(`SELECT ${LOGIN_COLUMNS} FROM owner_logins WHERE login_email = ?`).get(loginEmail) as OwnerLogin | undefined) ?? null;
  }

  loginOf(accountId: string): OwnerLogin | null {
    return (this.sql(`SELECT ${LOGIN_COLUMNS} FROM owner_logins WHERE account_id = ?`).get(accountId) as OwnerLogin | undefined) ?? null;
  }

  setPassword(accountId: string, passwordHash: string, now: number): void {
    this.sql('UPDATE owner_logins SET password_hash = ?, password_changed_at = ? WHERE account_id = ?').run(passwordHash, now, accountId);
  }

  insertSession(session: { id: string; accountId: string; cookieHash: string; createdAt: number; expiresAt: number }): void {
    this.sql(
      `INSERT INTO owner_sessions (id, account_id, cookie_hash, created_at, expires_at)
       VALUES (@id, @accountId, @cookieHash, @createdAt, @expiresAt)`,
    ).run(session);
  }

  sessionById(id: string): OwnerSessionRecord | null {
    return (this.sql(`SELECT ${SESSION_COLUMNS} FROM owner_sessions WHERE id = ?`).get(id) as OwnerSessionRecord | undefined) ?? null;
  }

  sessionByCookie(cookieHash: string): OwnerSessionRecord | null {
    return (this.sql(`SELECT ${SESSION_COLUMNS} FROM owner_sessions WHERE cookie_hash = ?`).get(cookieHash) as OwnerSessionRecord | undefined) ?? null;
  }

  endSession(id: string, now: number): boolean {
    return this.sql('UPDATE owner_sessions SET ended_at = ? WHERE id = ? AND ended_at IS NULL').run(now, id).changes === 1;
  }

  /** Ends every open session of an account (password change); returns how many. */
  endSessionsOf(accountId: string, now: number): number {
    return this.sql('UPDATE owner_sessions SET ended_at = ? WHERE account_id = ? AND ended_at IS NULL').run(now, accountId).changes;
  }

  /** Drops sessions that expired or ended before `before`, and used or expired links and codes. */
  sweep(before: number): number {
    return (
      this.sql('DELETE FROM owner_sessions WHERE expires_at < ? OR ended_at < ?').run(before, before).changes +
      this.sql('DELETE FROM owner_links WHERE expires_at < ? OR used_at < ?').run(before, before).changes +
      this.sql('DELETE FROM claim_codes WHERE expires_at < ?').run(before).changes
    );
  }

  insertLink(link: { tokenHash: string; accountId: string; createdAt: number; expiresAt: number }): void {
    this.sql('INSERT INTO owner_links (token_hash, account_id, created_at, expires_at) VALUES (@tokenHash, @accountId, @createdAt, @expiresAt)').run(link);
  }

  /** The account of an unused, unexpired link; null otherwise. */
  linkAccount(tokenHash: string, now: number): string | null {
    const row = this.sql('SELECT account_id AS accountId FROM owner_links WHERE token_hash = ? AND used_at IS NULL AND expires_at > ?').get(tokenHash, now) as
      | { accountId: string }
      | undefined;
    return row?.accountId ?? null;
  }

  /** Uses the link once; false when it was used, expired or never existed. Other open links of the account go too. */
  useLink(tokenHash: string, accountId: string, now: number): boolean {
    const used =
      this.sql('UPDATE owner_links SET used_at = ? WHERE token_hash = ? AND account_id = ? AND used_at IS NULL AND expires_at > ?').run(
        now,
        tokenHash,
        accountId,
        now,
      ).changes === 1;
    if (used) this.sql('UPDATE owner_links SET used_at = ? WHERE account_id = ? AND used_at IS NULL').run(now, accountId);
    return used;
  }

  insertClaimCode(code: { codeHash: string; ownerId: string; createdAt: number; expiresAt: number }): void {
    this.sql('INSERT INTO claim_codes (code_hash, owner_id, created_at, expires_at) VALUES (@codeHash, @ownerId, @createdAt, @expiresAt)').run(code);
  }

  /** Redeems a code once; the owner it names, or null when it was used, expired or never existed. */
  redeemClaimCode(codeHash: string, agentId: string, now: number): string | null {
    const row = this.sql(
      `UPDATE claim_codes SET redeemed_at = ?, redeemed_by = ?
       WHERE code_hash = ? AND redeemed_at IS NULL AND expires_at > ? RETURNING owner_id AS ownerId`,
    ).get(now, agentId, codeHash, now) as { ownerId: string } | undefined;
    return row?.ownerId ?? null;
  }
}
