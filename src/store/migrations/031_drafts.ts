import type { Migration } from './migration.js';

/**
 * Drafts an agent writes and its owner approves (docs/agents/drafts.md).
 *
 * request_json is the send request as the agent gave it (validated like a send); subject and
 * recipient_count are copied out for lists. Status:
 *   pending    written, waiting for the owner; the agent may change or delete it
 *   approving  an owner approved it and the send is under way (or was cut off by a crash:
 *              approving again resumes it, the draft id being the send's idempotency key)
 *   sent       the send service accepted it: submission_id names the outbound submission
 *   rejected   the owner declined it (reason)
 * decided_by/decided_at record the owner who approved or rejected it. folder_uid is the
 * draft's copy in the account's Drafts folder (visible over IMAP) while it is pending.
 */
export const drafts: Migration = {
  version: 31,
  name: 'drafts',
  sql: `
    CREATE TABLE drafts (
      seq INTEGER PRIMARY KEY,
      id TEXT NOT NULL UNIQUE,
      account_id TEXT NOT NULL REFERENCES accounts(id),
      key_id TEXT NOT NULL,
      request_json TEXT NOT NULL,
      subject TEXT NOT NULL,
      recipient_count INTEGER NOT NULL,
      status TEXT NOT NULL CHECK (status IN ('pending', 'approving', 'sent', 'rejected')),
      folder_uid INTEGER,
      created_at INTEGER NOT NULL,
      updated_at INTEGER NOT NULL,
      decided_by TEXT REFERENCES accounts(id),
      decided_at INTEGER,
      reason TEXT,
      submission_id TEXT
    );
    CREATE INDEX drafts_account ON drafts(account_id, seq);
    CREATE INDEX drafts_key ON drafts(key_id, seq);
    CREATE INDEX drafts_open ON drafts(account_id, status) WHERE status IN ('pending', 'approving');
  `,
};
