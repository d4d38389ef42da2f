import type { Migration } from './migration.js';

/**
 * Human owners (docs/design.md "Owners, domains and payments").
 *
 * An account is of kind `agent` (registered over REST/MCP) or `human` (signs in to the
 * console). A human account has its own mailbox like any account; its sign-in lives in
 * owner_logins: the login email (a login name, never mailed) and the argon2id hash of the
 * password, NULL until the one-time link of `agentpost owners create` is used.
 *
 * accounts.owner_id is the human account that owns an agent; an agent has at most one owner.
 *
 * owner_sessions: one row per sign-in. The browser cookie is a random secret whose SHA-256
 * is cookie_hash; the bearer JWT carries the row id. Ending a row (sign-out, password
 * change) ends both at once.
 *
 * owner_links: one-time password-setting links (token stored as SHA-256).
 * claim_codes: one-time codes an agent redeems to take an owner (code stored as SHA-256).
 */
export const owners: Migration = {
  version: 30,
  name: 'owners',
  sql: `
    ALTER TABLE accounts ADD COLUMN kind TEXT NOT NULL DEFAULT 'agent' CHECK (kind IN ('agent', 'human'));
    ALTER TABLE accounts ADD COLUMN owner_id TEXT REFERENCES accounts(id);
    CREATE INDEX accounts_owner ON accounts(owner_id, created_at) WHERE owner_id IS NOT NULL;

    CREATE TABLE owner_logins (
      account_id TEXT PRIMARY KEY REFERENCES accounts(id),
      login_email TEXT NOT NULL UNIQUE,
      password_hash TEXT,
      password_changed_at INTEGER,
      created_at INTEGER NOT NULL
    );

    CREATE TABLE owner_sessions (
      id TEXT PRIMARY KEY,
      account_id TEXT NOT NULL REFERENCES accounts(id),
      cookie_hash TEXT NOT NULL UNIQUE,
      created_at INTEGER NOT NULL,
      expires_at INTEGER NOT NULL,
      ended_at INTEGER
    );
    CREATE INDEX owner_sessions_account ON owner_sessions(account_id) WHERE ended_at IS NULL;
    CREATE INDEX owner_sessions_expiry ON owner_sessions(expires_at);

    CREATE TABLE owner_links (
      token_hash TEXT PRIMARY KEY,
      account_id TEXT NOT NULL REFERENCES accounts(id),
      created_at INTEGER NOT NULL,
      expires_at INTEGER NOT NULL,
      used_at INTEGER
    );
    CREATE INDEX owner_links_account ON owner_links(account_id);

    CREATE TABLE claim_codes (
      code_hash TEXT PRIMARY KEY,
      owner_id TEXT NOT NULL REFERENCES accounts(id),
      created_at INTEGER NOT NULL,
      expires_at INTEGER NOT NULL,
      redeemed_at INTEGER,
      redeemed_by TEXT REFERENCES accounts(id)
    );
    CREATE INDEX claim_codes_owner ON claim_codes(owner_id, created_at);
  `,
};
