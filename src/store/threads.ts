import { Repo } from './repo.js';

export interface ThreadRecord {
  id: number;
  mailboxId: string;
  subject: string;
  lastAt: number;
}

/** A thread with what its list item shows, counted over the messages it has now. */
export interface ThreadListRow extends ThreadRecord {
  messageCount: number;
  unreadCount: number;
  /** received_at of its newest message. */
  lastMessageAt: number;
}

/** Where a page of threads continues: after this (lastAt, id), newest activity first. */
export interface ThreadCursor {
  lastAt: number;
  id: number;
}

/** A message that has no thread yet (stored before threads existed), with what threading reads. */
export interface UnthreadedMessage {
  rowId: number;
  mailboxId: string;
  messageId: string | null;
  inReplyTo: string | null;
  references: string[];
  subject: string;
  receivedAt: number;
}

const COLUMNS = 't.id, t.mailbox_id AS mailboxId, t.subject, t.last_at AS lastAt';
const LIST_COLUMNS = `${COLUMNS},
  (SELECT count(*) FROM messages m WHERE m.thread_id = t.id) AS messageCount,
  (SELECT count(*) FROM messages m WHERE m.thread_id = t.id AND m.seen = 0) AS unreadCount,
  (SELECT max(m.received_at) FROM messages m WHERE m.thread_id = t.id) AS lastMessageAt`;

/** Threads of a mailbox and the Message-IDs that lead to them (migration 51). */
export class ThreadRepo extends Repo {
  /** The threads that hold or name any of these Message-IDs, oldest thread first. */
  threadsOfMessageIds(mailboxId: string, messageIds: readonly string[]): number[] {
    if (messageIds.length === 0) return [];
    return this.sql(
      `SELECT DISTINCT thread_id FROM thread_message_ids
       WHERE mailbox_id = ? AND message_id IN (SELECT value FROM json_each(?)) ORDER BY thread_id`,
    )
      .pluck()
      .all(mailboxId, JSON.stringify(messageIds)) as number[];
  }

  /** The most recently active thread with this subject key, active at `since` or later. */
  recentBySubject(mailboxId: string, subjectKey: string, since: number): number | null {
    const id = this.sql('SELECT id FROM threads WHERE mailbox_id = ? AND subject_key = ? AND last_at >= ? ORDER BY last_at DESC LIMIT 1')
      .pluck()
      .get(mailboxId, subjectKey, since) as number | undefined;
    return id ?? null;
  }

  create(mailboxId: string, subject: string, subjectKey: string, at: number): number {
    const result = this.sql('INSERT INTO threads (mailbox_id, subject, subject_key, last_at, created_at) VALUES (?, ?, ?, ?, ?)').run(
      mailboxId,
      subject,
      subjectKey,
      at,
      at,
    );
    return Number(result.lastInsertRowid);
  }

  /** Records activity at `at`; the newest activity never moves back. */
  touch(threadId: number, at: number): void {
    this.sql('UPDATE threads SET last_at = max(last_at, ?) WHERE id = ?').run(at, threadId);
  }

  /** Message-IDs already leading to a thread keep it (the first thread to hold or name an id owns it). */
  remember(mailboxId: string, messageIds: readonly string[], threadId: number): void {
    const insert = this.sql('INSERT OR IGNORE INTO thread_message_ids (mailbox_id, message_id, thread_id) VALUES (?, ?, ?)');
    for (const messageId of messageIds) insert.run(mailboxId, messageId, threadId);
  }

  /** Moves every message and Message-ID of `others` into `into`, and drops `others`. */
  merge(into: number, others: readonly number[]): void {
    const ids = JSON.stringify(others);
    this.sql('UPDATE thread_message_ids SET thread_id = ? WHERE thread_id IN (SELECT value FROM json_each(?))').run(into, ids);
    this.sql('UPDATE messages SET thread_id = ? WHERE thread_id IN (SELECT value FROM json_each(?))').run(into, ids);
    this.sql('UPDATE threads SET last_at = max(last_at, (SELECT max(last_at) FROM threads WHERE id IN (SELECT value FROM json_each(?)))) WHERE id = ?').run(
      ids,
      into,
    );
    this.sql('DELETE FROM threads WHERE id IN (SELECT value FROM json_each(?))').run(ids);
  }

  byId(mailboxId: string, id: number): ThreadListRow | null {
    const row = this.sql(`SELECT ${LIST_COLUMNS} FROM threads t WHERE t.mailbox_id = ? AND t.id = ?`).get(mailboxId, id);
    return (row as ThreadListRow | undefined) ?? null;
  }

  /**
   * Newest activity first, after the cursor. `only` restricts to these threads (a search's
   * matches). A thread whose messages were all removed is not listed.
   */
  page(mailboxId: string, after: ThreadCursor | null, limit: number, only?: readonly number[]): ThreadListRow[] {
    const cursor = after ?? { lastAt: Number.MAX_SAFE_INTEGER, id: Number.MAX_SAFE_INTEGER };
    const filter = only ? 'AND t.id IN (SELECT value FROM json_each(?))' : '';
    const args: unknown[] = [mailboxId, cursor.lastAt, cursor.lastAt, cursor.id, ...(only ? [JSON.stringify(only)] : []), limit];
    return this.sql(
      `SELECT ${LIST_COLUMNS} FROM threads t
       WHERE t.mailbox_id = ? AND (t.last_at < ? OR (t.last_at = ? AND t.id < ?)) ${filter}
         AND EXISTS (SELECT 1 FROM messages m WHERE m.thread_id = t.id)
       ORDER BY t.last_at DESC, t.id DESC LIMIT ?`,
    ).all(...args) as ThreadListRow[];
  }

  /** The distinct threads of these message rows. */
  threadsOfRows(rowIds: readonly number[]): number[] {
    return this.sql('SELECT DISTINCT thread_id FROM messages WHERE id IN (SELECT value FROM json_each(?)) AND thread_id IS NOT NULL')
      .pluck()
      .all(JSON.stringify(rowIds)) as number[];
  }

  /** The next messages without a thread, in the order they were stored. */
  unthreaded(limit: number): UnthreadedMessage[] {
    const rows = this.sql(
      `SELECT m.id AS rowId, f.mailbox_id AS mailboxId, m.message_id AS messageId, m.in_reply_to AS inReplyTo,
         m.subject, m.received_at AS receivedAt, json_extract(b.content_json, '$.references') AS referencesJson
       FROM messages m JOIN folders f ON f.id = m.folder_id LEFT JOIN message_bodies b ON b.message_rowid = m.id
       WHERE m.thread_id IS NULL ORDER BY m.id LIMIT ?`,
    ).all(limit) as (Omit<UnthreadedMessage, 'references'> & { referencesJson: string | null })[];
    return rows.map(({ referencesJson, ...row }) => ({ ...row, references: referencesJson ? (JSON.parse(referencesJson) as string[]) : [] }));
  }

  hasUnthreaded(): boolean {
    return this.sql('SELECT 1 FROM messages WHERE thread_id IS NULL LIMIT 1').get() !== undefined;
  }

  setThread(rowId: number, threadId: number): void {
    this.sql('UPDATE messages SET thread_id = ? WHERE id = ?').run(threadId, rowId);
  }
}
