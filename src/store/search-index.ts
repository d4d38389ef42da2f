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
 * The queue in front of the full-text index (migrations 7 and 9). Storing a message queues
 * its id in the database and its text in memory; `indexQueued` moves a batch into FTS5 in
 * one transaction, so the index gets one new segment per batch rather than one per stored
 * message, and the text is never written to disk twice.
 *
 * The texts live as long as this process. A queued id without a text (the process stopped
 * before indexing it) goes to the backfill, whose messages are indexed from their raw bytes.
 * Texts are dropped once they are below every queued id: by then their message was
 * indexed in a committed transaction, or its own transaction rolled back (a later message
 * that reuses the row id replaces the text first). A batch that rolls back keeps them.
 */
export class SearchIndexRepo extends Repo {
  /** Notified when a message is queued; main.ts kicks the indexer with it. */
  readonly queued = new Signal();
  private readonly texts = new Map<number, SearchText>();

  queue(rowId: number, folderId: number, text: SearchText): void {
    this.sql('INSERT INTO search_queue (message_rowid, folder_id) VALUES (?, ?)').run(rowId, folderId);
    this.texts.set(rowId, text);
    this.queued.notify();
  }

  hasQueued(): boolean {
    return this.sql('SELECT 1 FROM search_queue LIMIT 1').get() !== undefined;
  }

  /** Moves the oldest `limit` queued messages into the index; returns how many. Run inside a transaction. */
  indexQueued(limit: number): number {
    const rows = this.sql('SELECT message_rowid AS rowId, folder_id AS folderId FROM search_queue ORDER BY message_rowid LIMIT ?')
      .all(limit) as { rowId: number; folderId: number }[];
    const oldestQueued = rows.length > 0 ? rows[0].rowId : Number.POSITIVE_INFINITY;
    for (const rowId of this.texts.keys()) if (rowId < oldestQueued) this.texts.delete(rowId);
    if (rows.length === 0) return 0;
    for (const row of rows) {
      const text = this.texts.get(row.rowId);
      if (text) this.insert(row.rowId, row.folderId, text);
      else this.sql('INSERT OR IGNORE INTO search_backfill (message_rowid) VALUES (?)').run(row.rowId);
    }
    this.sql('DELETE FROM search_queue WHERE message_rowid <= ?').run(rows[rows.length - 1].rowId);
    return rows.length;
  }

  /** Hands every queued id to the backfill: at start, when no text of them is in memory. */
  backfillQueued(): void {
    this.sql('INSERT OR IGNORE INTO search_backfill (message_rowid) SELECT message_rowid FROM search_queue').run();
    this.sql('DELETE FROM search_queue').run();
    this.texts.clear();
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
    this.insert(item.rowId, item.folderId, text);
    this.sql('DELETE FROM search_backfill WHERE message_rowid = ?').run(item.rowId);
  }

  private insert(rowId: number, folderId: number, text: SearchText): void {
    this.sql("INSERT INTO messages_fts (rowid, folder, subject, participants, body) VALUES (?, 'f' || ?, ?, ?, ?)")
      .run(rowId, folderId, text.subject, text.participants, text.body);
  }
}
