import type { Migration } from './migration.js';

/**
 * Outgoing mail: submissions, their recipients with per-recipient outcomes and credits,
 * the history of outcome changes, idempotency records and suppressions.
 *
 * Recipient states (docs/design.md "outbound recipient outcomes"):
 *   queued      accepted, credit reserved, waiting for the delivery worker (or a local mailbox)
 *   deferred    the next server answered 4xx; retried with backoff (next_attempt_at) for up to 48 h
 *   delivered   the next server (or our own mailbox) accepted it: final, never resent
 *   bounced     delivered, then a verified DSN reported failure: final, credit NOT refunded
 *   failed      definite rejection (5xx, retries exhausted, unknown local address): final,
 *               credit refunded exactly once (refunded = 1)
 *   unresolved  connection lost or timeout after DATA: outcome unknown, credit stays reserved,
 *               never resent; an operator settles it (`agentpost outbound resolve`); while any
 *               recipient of a submission is unresolved, the identical message may not be
 *               sent again under a new idempotency key (docs/agents/sending.md, Idempotency)
 *   suppressed  the address is on the account's suppression list at acceptance: never sent,
 *               never charged (credit_reserved = 0)
 *
 * credit_reserved = 1 means one credit (and, for an access key, one budget unit) was taken
 * when the submission was accepted. refunded flips 0 -> 1 once, in the same transaction that
 * gives the credit back, so a refund happens at most once (store: SubmissionRepo.refundOnce).
 * Access-key budgets are derived from rows with credit_reserved = 1 AND refunded = 0.
 */
export const sending: Migration = {
  version: 2,
  name: 'sending',
  sql: `
    CREATE TABLE submissions (
      seq INTEGER PRIMARY KEY,
      id TEXT NOT NULL UNIQUE,
      account_id TEXT NOT NULL REFERENCES accounts(id),
      key_id TEXT NOT NULL,
      message_id TEXT NOT NULL,
      content_hash TEXT NOT NULL,
      from_address TEXT NOT NULL,
      subject TEXT NOT NULL,
      via TEXT NOT NULL CHECK (via IN ('rest', 'mcp', 'smtp')),
      sent_copy_saved INTEGER NOT NULL DEFAULT 0,
      created_at INTEGER NOT NULL,
      raw BLOB NOT NULL
    );
    -- Outbound list (newest first, cursor = seq) per account and per sending key.
    CREATE INDEX submissions_account ON submissions(account_id, seq);
    CREATE INDEX submissions_key ON submissions(key_id, seq);
    -- "identical message with an unresolved recipient" check.
    CREATE INDEX submissions_content ON submissions(account_id, content_hash);

    CREATE TABLE submission_recipients (
      id INTEGER PRIMARY KEY,
      submission_id TEXT NOT NULL REFERENCES submissions(id),
      account_id TEXT NOT NULL,
      key_id TEXT NOT NULL,
      address TEXT NOT NULL,
      domain TEXT NOT NULL,
      kind TEXT NOT NULL CHECK (kind IN ('to', 'cc', 'bcc')),
      status TEXT NOT NULL CHECK (status IN
        ('queued', 'deferred', 'delivered', 'bounced', 'failed', 'unresolved', 'suppressed')),
      credit_reserved INTEGER NOT NULL CHECK (credit_reserved IN (0, 1)),
      refunded INTEGER NOT NULL DEFAULT 0 CHECK (refunded IN (0, 1) AND refunded <= credit_reserved),
      attempts INTEGER NOT NULL DEFAULT 0,
      next_attempt_at INTEGER,
      last_smtp_code INTEGER,
      last_enhanced_code TEXT,
      last_diagnostic TEXT,
      created_at INTEGER NOT NULL,
      updated_at INTEGER NOT NULL,
      UNIQUE (submission_id, address)
    );
    -- The delivery worker's due query: only rows still waiting are in this index.
    CREATE INDEX submission_recipients_due ON submission_recipients(next_attempt_at)
      WHERE status IN ('queued', 'deferred');
    -- Per-account daily/minute usage and per-key budgets, counted by creation time.
    CREATE INDEX submission_recipients_account_day ON submission_recipients(account_id, created_at);
    CREATE INDEX submission_recipients_key_day ON submission_recipients(key_id, created_at);

    -- Every state change of a recipient; read back capped to the latest 200 per submission.
    CREATE TABLE recipient_events (
      id INTEGER PRIMARY KEY,
      recipient_id INTEGER NOT NULL REFERENCES submission_recipients(id),
      submission_id TEXT NOT NULL,
      status TEXT NOT NULL,
      smtp_code INTEGER,
      enhanced_code TEXT,
      diagnostic TEXT,
      at INTEGER NOT NULL
    );
    CREATE INDEX recipient_events_submission ON recipient_events(submission_id, id);

    -- One per (account, idempotency key); kept at least 24 hours, then swept.
    CREATE TABLE idempotency_records (
      account_id TEXT NOT NULL,
      idempotency_key TEXT NOT NULL,
      key_id TEXT NOT NULL,
      content_hash TEXT NOT NULL,
      submission_id TEXT NOT NULL,
      response_json TEXT NOT NULL,
      created_at INTEGER NOT NULL,
      PRIMARY KEY (account_id, idempotency_key)
    );
    CREATE INDEX idempotency_records_age ON idempotency_records(created_at);

    CREATE TABLE suppressions (
      id TEXT PRIMARY KEY,
      account_id TEXT NOT NULL REFERENCES accounts(id),
      address TEXT NOT NULL,
      reason TEXT NOT NULL CHECK (reason IN ('bounce', 'complaint', 'manual')),
      can_release INTEGER NOT NULL CHECK (can_release IN (0, 1)),
      created_at INTEGER NOT NULL,
      released_at INTEGER
    );
    -- At most one active suppression per address and account.
    CREATE UNIQUE INDEX suppressions_active ON suppressions(account_id, address) WHERE released_at IS NULL;
  `,
};
