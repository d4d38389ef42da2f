import { REMOVED_FOLDER, REMOVED_TEXT, SEARCH_TEXT, type IndexEntry, type SearchText } from '../core/search-index.js';
import type { CommitFeed } from './commit-feed.js';
import type { Db } from './db.js';
import type { MessageRawRepo } from './message-raw.js';
import { Repo } from './repo.js';
import type { SearchIndexReader } from './search-db.js';

export type { SearchText } from '../core/search-index.js';

/** A message to be indexed again from its raw bytes. */
export interface BackfillItem {
  rowId: number;
  folderId: number;
  raw: Buffer;
}

/**
 * What the full-text index (its own file: search-db.ts) still has to take, on the store's side.
 * A stored message's text goes to the index from memory: `queue` announces it with the
 * transaction that stores the message (a notice on the commit feed, heard only once it is
 * committed), and nothing is written here for it. The index's mark says how far it got; what a
 * stop left above the mark is listed in search_backfill at the next start and indexed from its
 * raw bytes, as are copies whose text is not at hand. A removal is kept here (migration 32) until
 * the index has blanked its entry.
 */
export class SearchIndexRepo extends Repo {
  constructor(
    db: Db,
    private readonly feed: CommitFeed,
    private readonly reader: SearchIndexReader,
    private readonly raws: MessageRawRepo,
  ) {
    super(db);
  }

  /**
   * Inside the storing transaction: a change, so the node's row of search_waiting is written
   * with it (SearchIndexService, before the commit).
   */
  queue(rowId: number, folderId: number, text: SearchText): void {
    const entry: IndexEntry = { rowId, folderId, text };
    this.feed.stage(SEARCH_TEXT, entry, true);
  }

  /**
   * A removed message: out of the backfill if it waits there, and a removal to hand over, so its
   * index entry is blanked. Inside the removing transaction.
   */
  forget(rowId: number): void {
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

  /**
   * Inside a transaction that stores messages whose texts will wait in this node's memory: the
   * node's row (migration 88) covers them, its lowest kept, its lease moved on.
   */
  markWaiting(nodeId: string, lowest: number, leaseUntil: number): void {
    this.sql(
      `INSERT INTO search_waiting (node_id, lowest, lease_until) VALUES (?, ?, ?)
       ON CONFLICT (node_id) DO UPDATE SET lowest = min(lowest, excluded.lowest), lease_until = excluded.lease_until`,
    ).run(nodeId, lowest, leaseUntil);
  }

  /** Once texts are durable in the index: the node's row covers what still waits (from `lowest`), or goes when nothing does. */
  settleWaiting(nodeId: string, lowest: number | null, leaseUntil: number): void {
    if (lowest === null) this.sql('DELETE FROM search_waiting WHERE node_id = ?').run(nodeId);
    else this.sql('UPDATE search_waiting SET lowest = ?, lease_until = ? WHERE node_id = ?').run(lowest, leaseUntil, nodeId);
  }

  /**
   * Takes over the rows of nodes whose lease ran out by `now`, and `ownNodeId`'s (from before
   * this node started): every message from their lowest up is listed for the backfill, indexed
   * again from its raw bytes. Returns how many rows were taken over. Inside a transaction.
   */
  takeOverWaiting(now: number, ownNodeId: string | null): number {
    const rows = this.waitingToTakeOver(now, ownNodeId);
    for (const { nodeId, lowest } of rows) {
      this.backfillAbove(lowest - 1);
      this.sql('DELETE FROM search_waiting WHERE node_id = ?').run(nodeId);
    }
    return rows.length;
  }

  /** The rows `takeOverWaiting` would take: a read, so a look that finds none writes nothing. */
  waitingToTakeOver(now: number, ownNodeId: string | null): { nodeId: string; lowest: number }[] {
    return this.sql('SELECT node_id AS nodeId, lowest FROM search_waiting WHERE lease_until <= ? OR node_id = ?').all(now, ownNodeId) as {
      nodeId: string;
      lowest: number;
    }[];
  }

  /** A message to index from its raw bytes: a copy whose text is not at hand. */
  backfill(rowId: number): void {
    this.sql('INSERT OR IGNORE INTO search_backfill (message_rowid) VALUES (?)').run(rowId);
  }

  /** Every stored message above the index's mark: committed, and not indexed when the last process stopped. */
  backfillAbove(rowId: number): void {
    this.sql('INSERT OR IGNORE INTO search_backfill (message_rowid) SELECT id FROM messages WHERE id > ?').run(rowId);
  }

  backfillCount(): number {
    return this.sql('SELECT count(*) FROM search_backfill').pluck().get() as number;
  }

  backfillBatch(limit: number): BackfillItem[] {
    const rows = this.sql(
      `SELECT b.message_rowid AS rowId, m.folder_id AS folderId, r.raw, r.raw_value_id AS valueId FROM search_backfill b
       JOIN messages m ON m.id = b.message_rowid JOIN message_raw r ON r.message_rowid = b.message_rowid
       ORDER BY b.message_rowid LIMIT ?`,
    ).all(limit) as (BackfillItem & { valueId: number | null })[];
    return rows.map(({ valueId, ...item }) => (valueId === null ? item : { ...item, raw: this.raws.bytes(item.rowId) ?? Buffer.alloc(0) }));
  }

  backfilled(entries: IndexEntry[]): void {
    this.sql('DELETE FROM search_backfill WHERE message_rowid IN (SELECT value FROM json_each(?))').run(idsOf(entries));
  }

  /** The highest message row id: no index entry above it can be of a stored message. */
  lastMessageRowId(): number {
    return (this.sql('SELECT max(id) FROM messages').pluck().get() as number | null) ?? 0;
  }

  /** The index's mark (search-db.ts INDEX_STATE), read from the index file; null before it has one. */
  indexedThrough(): number | null {
    return this.reader.through();
  }
}

/** Every stored message listed for indexing: for an index that starts empty (search-db.ts prepareSearchIndexFile). */
export const backfillAllMessages = (db: Db): void => {
  db.prepare('INSERT OR IGNORE INTO search_backfill (message_rowid) SELECT id FROM messages').run();
};

const idsOf = (entries: IndexEntry[]): string => JSON.stringify(entries.map((entry) => entry.rowId));
