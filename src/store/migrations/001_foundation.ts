import type { Migration } from './migration.js';

/** Accounts, keys, mailboxes, folders, messages with their raw bytes and a full-text index. */
export const foundation: Migration = {
  version: 1,
  name: 'foundation',
  sql: `
    CREATE TABLE accounts (
      id TEXT PRIMARY KEY,
      agent_id TEXT NOT NULL,
      name TEXT,
      email TEXT NOT NULL UNIQUE,
      credits INTEGER NOT NULL DEFAULT 0 CHECK (credits >= 0),
      status TEXT NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'suspended')),
      sending_state TEXT NOT NULL DEFAULT 'probation'
        CHECK (sending_state IN ('probation', 'standard', 'reviewed', 'paused')),
      created_at INTEGER NOT NULL
    );

    CREATE TABLE api_keys (
      id TEXT PRIMARY KEY,
      account_id TEXT NOT NULL REFERENCES accounts(id),
      kind TEXT NOT NULL CHECK (kind IN ('full', 'access')),
      key_hash TEXT NOT NULL UNIQUE,
      status TEXT NOT NULL CHECK (status IN ('active', 'pending', 'revoked', 'expired')),
      created_at INTEGER NOT NULL,
      expires_at INTEGER,
      revoked_at INTEGER
    );
    CREATE INDEX api_keys_account ON api_keys(account_id, kind, status);

    CREATE TABLE mailboxes (
      id TEXT PRIMARY KEY,
      account_id TEXT NOT NULL REFERENCES accounts(id),
      address TEXT NOT NULL UNIQUE,
      created_at INTEGER NOT NULL
    );
    CREATE INDEX mailboxes_account ON mailboxes(account_id);

    CREATE TABLE folders (
      id INTEGER PRIMARY KEY,
      mailbox_id TEXT NOT NULL REFERENCES mailboxes(id),
      name TEXT NOT NULL,
      uid_validity INTEGER NOT NULL,
      uid_next INTEGER NOT NULL DEFAULT 1,
      message_count INTEGER NOT NULL DEFAULT 0,
      created_at INTEGER NOT NULL,
      UNIQUE (mailbox_id, name)
    );

    CREATE TABLE messages (
      id INTEGER PRIMARY KEY,
      folder_id INTEGER NOT NULL REFERENCES folders(id),
      uid INTEGER NOT NULL,
      message_id TEXT,
      in_reply_to TEXT,
      subject TEXT NOT NULL,
      from_json TEXT,
      to_json TEXT NOT NULL,
      cc_json TEXT NOT NULL,
      date INTEGER,
      preview TEXT NOT NULL,
      size INTEGER NOT NULL,
      attachments_json TEXT NOT NULL,
      encrypted INTEGER NOT NULL DEFAULT 0,
      seen INTEGER NOT NULL DEFAULT 0,
      flagged INTEGER NOT NULL DEFAULT 0,
      received_at INTEGER NOT NULL,
      UNIQUE (folder_id, uid)
    );

    -- Raw RFC 822 bytes exactly as received, apart from the rows listing reads.
    CREATE TABLE message_raw (
      message_rowid INTEGER PRIMARY KEY REFERENCES messages(id) ON DELETE CASCADE,
      raw BLOB NOT NULL
    );

    CREATE VIRTUAL TABLE messages_fts USING fts5(
      subject, participants, body,
      content = '', contentless_delete = 1,
      tokenize = 'unicode61 remove_diacritics 2'
    );

    -- Fixed-window-free rate limiting: one row per counted event, pruned by age.
    CREATE TABLE rate_events (
      bucket TEXT NOT NULL,
      subject TEXT NOT NULL,
      at INTEGER NOT NULL
    );
    CREATE INDEX rate_events_lookup ON rate_events(bucket, subject, at);

    -- docs/design.md rule 6: events written in the same transaction as the change they describe.
    CREATE TABLE outbox (
      id INTEGER PRIMARY KEY,
      topic TEXT NOT NULL,
      payload TEXT NOT NULL,
      created_at INTEGER NOT NULL
    );
    CREATE INDEX outbox_topic ON outbox(topic, id);
  `,
};
