import type { Migration } from './migration.js';

/**
 * Custom domains (docs/design.md "Owners, domains and payments").
 *
 * domains: one row per domain a holder added (the holder is the account that manages it: a
 * signed-in owner's, or the account whose key has domains:*). Several holders may each have a
 * pending claim to the same name; once one proves ownership (verified_at) the name is that
 * holder's alone until the row is deleted. The row carries what the published records need:
 * the ownership token, the domain's own DKIM key (private key sealed with the data folder's
 * secret key), the MTA-STS policy id, and the last check's results (why it is not verified).
 * addon_expires_at: until when an extra domain beyond the plan is paid for.
 *
 * domain_aliases: an address on a domain that delivers to one mailbox, which may also send
 * with it as From. domain_mailboxes: an agent account made on a domain; a deleted one keeps
 * its account and mail (its keys revoked, its mailbox closed) until purge_after.
 *
 * mailboxes.closed_at: a closed mailbox receives nothing (SMTP 550 5.1.1).
 *
 * hosting: paid access of a holder, until expires_at; hosting_events: every extension of it
 * (an operator grant or a payment) with what it was for.
 */
export const domains: Migration = {
  version: 60,
  name: 'domains',
  sql: `
    CREATE TABLE domains (
      id TEXT PRIMARY KEY,
      holder_id TEXT NOT NULL REFERENCES accounts(id),
      domain TEXT NOT NULL,
      status TEXT NOT NULL CHECK (status IN ('pending', 'verified', 'failed')),
      status_reason TEXT,
      ownership_token TEXT NOT NULL,
      dkim_selector TEXT NOT NULL,
      dkim_private_key TEXT NOT NULL,
      dkim_public_key TEXT NOT NULL,
      mta_sts_id TEXT NOT NULL,
      results_json TEXT,
      checked_at INTEGER,
      verified_at INTEGER,
      addon_expires_at INTEGER,
      created_at INTEGER NOT NULL,
      deleted_at INTEGER
    );
    CREATE UNIQUE INDEX domains_holder_live ON domains(holder_id, domain) WHERE deleted_at IS NULL;
    CREATE UNIQUE INDEX domains_proven ON domains(domain) WHERE verified_at IS NOT NULL AND deleted_at IS NULL;
    CREATE INDEX domains_holder ON domains(holder_id, created_at);

    CREATE TABLE domain_aliases (
      id TEXT PRIMARY KEY,
      domain_id TEXT NOT NULL REFERENCES domains(id),
      holder_id TEXT NOT NULL REFERENCES accounts(id),
      address TEXT NOT NULL UNIQUE,
      mailbox_id TEXT NOT NULL REFERENCES mailboxes(id),
      created_at INTEGER NOT NULL
    );
    CREATE INDEX domain_aliases_domain ON domain_aliases(domain_id, created_at);
    CREATE INDEX domain_aliases_holder ON domain_aliases(holder_id);
    CREATE INDEX domain_aliases_mailbox ON domain_aliases(mailbox_id);

    CREATE TABLE domain_mailboxes (
      account_id TEXT PRIMARY KEY REFERENCES accounts(id),
      domain_id TEXT NOT NULL REFERENCES domains(id),
      holder_id TEXT NOT NULL REFERENCES accounts(id),
      created_at INTEGER NOT NULL,
      deleted_at INTEGER,
      purge_after INTEGER,
      purged_at INTEGER
    );
    CREATE INDEX domain_mailboxes_domain ON domain_mailboxes(domain_id, created_at);
    CREATE INDEX domain_mailboxes_holder ON domain_mailboxes(holder_id) WHERE deleted_at IS NULL;
    CREATE INDEX domain_mailboxes_purge ON domain_mailboxes(purge_after) WHERE purged_at IS NULL;

    ALTER TABLE mailboxes ADD COLUMN closed_at INTEGER;

    CREATE TABLE hosting (
      holder_id TEXT PRIMARY KEY REFERENCES accounts(id),
      expires_at INTEGER NOT NULL,
      updated_at INTEGER NOT NULL
    );
    CREATE TABLE hosting_events (
      id INTEGER PRIMARY KEY,
      holder_id TEXT NOT NULL REFERENCES accounts(id),
      domain_id TEXT REFERENCES domains(id),
      days INTEGER NOT NULL CHECK (days > 0),
      source TEXT NOT NULL CHECK (source IN ('grant', 'payment')),
      reference TEXT,
      expires_at INTEGER NOT NULL,
      created_at INTEGER NOT NULL
    );
    CREATE INDEX hosting_events_holder ON hosting_events(holder_id, id);
  `,
};
