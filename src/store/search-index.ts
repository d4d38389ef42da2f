import { Signal } from '../core/signal.js';
import { Repo } from './repo.js';

/** What the full-text index holds of a message. */
export interface SearchText {
  subject: string;
  participants: string;
  body: string;
}

/** A message stored before migration 007, to be indexed again from its raw bytes. */
export interface BackfillItem {
  rowId: number;
  folderId: number;
  raw: Buffer;
}

/** Restricts an FTS5 query to one folder's messages, through the index's folder token. */
export const inFolder = (folderId: number, match: string): string => `folder : "f${folderId}" AND (${match})`;

/**
 * The queue in front of the full-text index (migration 007). Storing a message queues its
 * text; `indexQueued` moves a batch into FTS5 in one statement, so the index gets one new
 * segment per batch rather than one per stored message.
 */
export class SearchIndexRepo extends Repo {
  /** Notified when a message is queued; main.ts kicks the indexer with it. */
  readonly queued = new Signal();

  queue(rowId: number, folderId: number, text: SearchText): void {
    this.sql('INSERT INTO search_queue (message_rowid, folder_id, subject, participants, body) VALUES (?, ?, ?, ?, ?)')
      .run(rowId, folderId, text.subject, text.participants, text.body);
    this.queued.notify();
  }

  hasQueued(): boolean {
    return this.sql('SELECT 1 FROM search_queue LIMIT 1').get() !== undefined;
  }

  /** Moves the oldest `limit` queued messages into the index; returns how many. Run inside a transaction. */
  indexQueued(limit: number): number {
    const { last, count } = this.sql(
      'SELECT max(message_rowid) AS last, count(*) AS count FROM (SELECT message_rowid FROM search_queue ORDER BY message_rowid LIMIT ?)',
    ).get(limit) as { last: number | null; count: number };
    if (last === null) return 0;
    this.sql(
      `INSERT INTO messages_fts (rowid, folder, subject, participants, body)
       SELECT message_rowid, 'f' || folder_id, subject, participants, body FROM search_queue WHERE message_rowid <= ?`,
    ).run(last);
    this.sql('DELETE FROM search_queue WHERE message_rowid <= ?').run(last);
    return count;
  }

  backfillCount(): number {
    return this.sql('SELECT count(*) FROM search_backfill').pluck().get() as number;
  }

  backfillBatch(limit: number): BackfillItem[] {
    return this.sql(
      `SELECT b.message_rowid AS rowId, m.folder_id AS folderId, r.raw FROM search_backfill b
       JOIN messages m ON m.id = b.message_rowid JOIN message_raw r ON r.message_rowid = b.message_rowid
       ORDER BY b.message_rowid LIMIT ?`,
    ).all(limit) as BackfillItem[];
  }

  indexBackfilled(item: Omit<BackfillItem, 'raw'>, text: SearchText): void {
    this.sql("INSERT INTO messages_fts (rowid, folder, subject, participants, body) VALUES (?, 'f' || ?, ?, ?, ?)")
      .run(item.rowId, item.folderId, text.subject, text.participants, text.body);
    this.sql('DELETE FROM search_backfill WHERE message_rowid = ?').run(item.rowId);
  }
}
