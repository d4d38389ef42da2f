import type { Migration } from './migration.js';

/**
 * The junk filter (src/services/junk/, docs/operators/junk.md):
 *
 * - `messages.junk_json`: the filter's verdict on a received message (src/core/junk.ts), written
 *   with it; NULL for mail the filter did not judge (Sent copies, IMAP APPEND, mail from before).
 * - `junk_models`: one statistical model per mailbox, and the server-wide one (id 1, no
 *   mailbox) that only the operator's judgments train; `ham` and `junk` count the judgments.
 * - `junk_features`: per model, how many judged-ham and judged-junk messages had each feature
 *   (a 32-bit hash, src/mime/junk-tokens.ts: no words are stored).
 * - `junk_senders`: per mailbox, how many messages from an address it judged ham and junk.
 * - `junk_trained`: what a message's training added (so a changed judgment takes exactly that
 *   back): ham or junk, whether the server-wide model got it too, its sender and features.
 * - `junk_queue`: messages whose judgment ($Junk / $NotJunk) changed and whose training has
 *   not caught up yet; written in the transaction of the change.
 * - `webhook_endpoints.skip_junk`: an endpoint that asked for no events about mail filed as junk.
 * - an index of the addresses each account sent to: "this mailbox has written to the sender".
 */
export const junk: Migration = {
  version: 82,
  name: 'junk',
  sql: `
    ALTER TABLE messages ADD COLUMN junk_json TEXT;

    CREATE TABLE junk_models (
      id INTEGER PRIMARY KEY,
      mailbox_id TEXT UNIQUE REFERENCES mailboxes(id),
      ham INTEGER NOT NULL DEFAULT 0,
      junk INTEGER NOT NULL DEFAULT 0
    );
    INSERT INTO junk_models (id, mailbox_id) VALUES (1, NULL);

    CREATE TABLE junk_features (
      model_id INTEGER NOT NULL REFERENCES junk_models(id),
      feature INTEGER NOT NULL,
      ham INTEGER NOT NULL,
      junk INTEGER NOT NULL,
      PRIMARY KEY (model_id, feature)
    ) WITHOUT ROWID;

    CREATE TABLE junk_senders (
      mailbox_id TEXT NOT NULL REFERENCES mailboxes(id),
      address TEXT NOT NULL,
      ham INTEGER NOT NULL,
      junk INTEGER NOT NULL,
      PRIMARY KEY (mailbox_id, address)
    ) WITHOUT ROWID;

    CREATE TABLE junk_trained (
      message_rowid INTEGER PRIMARY KEY REFERENCES messages(id) ON DELETE CASCADE,
      as_junk INTEGER NOT NULL CHECK (as_junk IN (0, 1)),
      server INTEGER NOT NULL CHECK (server IN (0, 1)),
      sender TEXT,
      features BLOB NOT NULL
    );

    CREATE TABLE junk_queue (message_rowid INTEGER PRIMARY KEY);

    ALTER TABLE webhook_endpoints ADD COLUMN skip_junk INTEGER NOT NULL DEFAULT 0;

    CREATE INDEX submission_recipients_account_address ON submission_recipients(account_id, address);
  `,
};
