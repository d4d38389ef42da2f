import type { Migration } from './migration.js';

/**
 * Conversations (src/services/mail/threads.ts): every message has a thread, computed when it
 * is stored. `threads` holds each thread's first subject, the key the subject fallback
 * compares, and its newest activity; `thread_message_ids` maps every Message-ID a thread's
 * messages have or name as ancestors (In-Reply-To, References) to it, so a reply, a copy, or
 * a parent arriving after its child finds it in one lookup. Messages stored before this
 * migration have no thread yet (thread_id NULL): a worker threads them in arrival order.
 */
export const threads: Migration = {
  version: 51,
  name: 'threads',
  sql: `
    CREATE TABLE threads (
      id INTEGER PRIMARY KEY,
      mailbox_id TEXT NOT NULL REFERENCES mailboxes(id),
      subject TEXT NOT NULL,
      subject_key TEXT NOT NULL,
      last_at INTEGER NOT NULL,
      created_at INTEGER NOT NULL
    );
    CREATE INDEX threads_activity ON threads(mailbox_id, last_at, id);
    CREATE INDEX threads_subject ON threads(mailbox_id, subject_key, last_at);

    CREATE TABLE thread_message_ids (
      mailbox_id TEXT NOT NULL,
      message_id TEXT NOT NULL,
      thread_id INTEGER NOT NULL,
      PRIMARY KEY (mailbox_id, message_id)
    ) WITHOUT ROWID;
    CREATE INDEX thread_message_ids_thread ON thread_message_ids(thread_id);

    ALTER TABLE messages ADD COLUMN thread_id INTEGER;
    CREATE INDEX messages_thread ON messages(thread_id, received_at);
  `,
};
