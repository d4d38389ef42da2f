import { REMOVED_FOLDER, REMOVED_TEXT, type IndexEntry, type SearchText } from '../core/search-index.js';
import { Repo } from './repo.js';

export type { SearchText } from '../core/search-index.js';

/** A message to be indexed again from its raw bytes. */
export interface BackfillItem {
  rowId: number;
  folderId: number;
  raw: Buffer;
}

/** A queued message; `text` is missing when the process that stored it has stopped since. */
export interface QueuedEntry {
  rowId: number;
  folderId: number;
  text: SearchText | undefined;
}

/**
 * What still has to reach the full-text index (its own file: search-db.ts), kept in the
 * store so that it commits with the mail (migrations 7 and 9). Storing a message queues its
 * id here and its text in memory; the text is never written to the store. A queued id
 * leaves the queue only after the index has its entry durably.
 *
 * A queued id without a text (the process stopped before indexing it) goes to the backfill,
 * whose messages are indexed from their raw bytes. A text outlives its queue row only when
 * its transaction rolled back; it is dropped once below every queued id (a later message
 * that reuses the row id replaces it first).
 */
export class SearchIndexRepo extends Repo {
  private readonly texts = new Map<number, SearchText>();

  queue(rowId: number, folderId: number, text: SearchText): void {
    this.sql('INSERT INTO search_queue (message_rowid, folder_id) VALUES (?, ?)').run(rowId, folderId);
    this.texts.set(rowId, text);
  }

  /**
   * A removed message (migration 032): out of the queue and the backfill if it waits there,
   * and a removal to hand over, so its index entry is blanked. Inside the removing transaction.
   */
  forget(rowId: number): void {
    this.sql('DELETE FROM search_queue WHERE message_rowid = ?').run(rowId);
    this.sql('DELETE FROM search_backfill WHERE message_rowid = ?').run(rowId);
    this.sql('INSERT INTO search_removals (message_rowid) VALUES (?)').run(rowId);
  }

  /** Removals not yet handed over durably, oldest first, as blank entries in no folder. */
  removals(): { seq: number; entry: IndexEntry }[] {
    const rows = this.sql('SELECT seq, message_rowid AS rowId FROM search_removals ORDER BY seq').all() as { seq: number; rowId: number }[];
    return rows.map(({ seq, rowId }) => ({ seq, entry: { rowId, folderId: REMOVED_FOLDER, text: REMOVED_TEXT } }));
  }

  /** The blanks are durable in the index. */
  removed(seqs: number[]): void {
    this.sql('DELETE FROM search_removals WHERE seq IN (SELECT value FROM json_each(?))').run(JSON.stringify(seqs));
  }

  /** A message to index from its raw bytes: a copy whose text is not at hand. */
  backfill(rowId: number): void {
    this.sql('INSERT OR IGNORE INTO search_backfill (message_rowid) VALUES (?)').run(rowId);
  }

  hasQueued(): boolean {
    return this.sql('SELECT 1 FROM search_queue LIMIT 1').get() !== undefined;
  }

  /** Queued messages above `rowId`, oldest first. */
  queuedAfter(rowId: number): QueuedEntry[] {
    const rows = this.sql('SELECT message_rowid AS rowId, folder_id AS folderId FROM search_queue WHERE message_rowid > ? ORDER BY message_rowid').all(
      rowId,
    ) as { rowId: number; folderId: number }[];
    return rows.map((row) => ({ ...row, text: this.texts.get(row.rowId) }));
  }

  /** Indexed: out of the queue, and their texts out of memory. */
  dequeue(entries: IndexEntry[]): void {
    this.sql('DELETE FROM search_queue WHERE message_rowid IN (SELECT value FROM json_each(?))').run(idsOf(entries));
    for (const entry of entries) this.texts.delete(entry.rowId);
    const oldest = this.sql('SELECT min(message_rowid) FROM search_queue').pluck().get() as number | null;
    for (const rowId of this.texts.keys()) if (oldest === null || rowId < oldest) this.texts.delete(rowId);
  }

  /** Queued ids with no text in memory: indexed from their raw bytes instead. */
  moveToBackfill(rowIds: number[]): void {
    const ids = JSON.stringify(rowIds);
    this.sql('INSERT OR IGNORE INTO search_backfill (message_rowid) SELECT value FROM json_each(?)').run(ids);
    this.sql('DELETE FROM search_queue WHERE message_rowid IN (SELECT value FROM json_each(?))').run(ids);
  }

  /** Hands every queued id to the backfill: at start, when no text of them is in memory. */
  backfillQueued(): void {
    this.sql('INSERT OR IGNORE INTO search_backfill (message_rowid) SELECT message_rowid FROM search_queue').run();
    this.sql('DELETE FROM search_queue').run();
    this.texts.clear();
  }

  /** Every stored message, for an index that starts empty. */
  backfillAll(): void {
    this.sql('INSERT OR IGNORE INTO search_backfill (message_rowid) SELECT id FROM messages').run();
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

  backfilled(entries: IndexEntry[]): void {
    this.sql('DELETE FROM search_backfill WHERE message_rowid IN (SELECT value FROM json_each(?))').run(idsOf(entries));
  }

  /** The highest message row id: no index entry above it can be of a stored message. */
  lastMessageRowId(): number {
    return (this.sql('SELECT max(id) FROM messages').pluck().get() as number | null) ?? 0;
  }
}

const idsOf = (entries: IndexEntry[]): string => JSON.stringify(entries.map((entry) => entry.rowId));
