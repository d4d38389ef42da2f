import type { IndexEntry, IndexWriter } from '../core/search-index.js';
import { connect, type OpenOptions, startMapping, unmapPages } from './db.js';
import { type Counted, type IndexPosition, MatchCounts } from './match-counts.js';
import { Repo } from './repo.js';
import { pragma } from './statements.js';

/**
 * The full-text index has a SQLite file of its own beside the store (`agentpost.search.db` beside
 * `agentpost.db`), so that it can be written by a connection on another thread. Indexing
 * (tokenizing each message, writing FTS5 segments) was a large share of the MX's main thread
 * (docs/contributing/benchmarks.md); in the store's file it would have to hold the store's one
 * write lock, which the main thread's commits wait on. The index is derived data: the store's
 * search_queue and search_backfill say which messages still need indexing, and every entry can be
 * made again from the raw bytes.
 */
export const searchIndexFile = (storeFile: string): string => {
  if (storeFile === ':memory:') throw new Error('the store needs a file: its search index lives beside it');
  return `${storeFile.replace(/\.db$/, '')}.search.db`;
};

/** Raised when the index's table changes; an index of another version is rebuilt from the store. */
const SCHEMA_VERSION = 1;

/**
 * One token per folder (`f<folder id>`) lets FTS5 itself keep a search in one folder, and
 * Porter stemming over unicode61 matches words with their inflections (see toFtsQuery).
 * Contentless: the index keeps no copy of the text (the store has the raw bytes).
 */
const SCHEMA = `
  CREATE VIRTUAL TABLE messages_fts USING fts5(
    folder, subject, participants, body,
    content = '', contentless_delete = 1,
    tokenize = 'porter unicode61 remove_diacritics 2'
  );
`;

/**
 * One row per write transaction with the lowest row id it touched, so that a reader can tell
 * when only entries above those it counted were written since (MatchCounts). The last
 * WRITES_KEPT are kept; a reader whose count is older counts again.
 */
const WRITES = 'CREATE TABLE IF NOT EXISTS index_writes (seq INTEGER PRIMARY KEY, lowest INTEGER NOT NULL)';
const WRITES_KEPT = 1000;

/**
 * The index's mark: every message of the store with a row id up to `through` is indexed,
 * removed, or listed in the store's search_backfill. Moved up in the transaction that writes
 * entries; what is above it at a start was committed but not yet indexed, and is backfilled.
 * No row: a file from before the mark, whose start sets it (src/services/mail/search-index.ts).
 */
const INDEX_STATE = 'CREATE TABLE IF NOT EXISTS index_state (id INTEGER PRIMARY KEY CHECK (id = 1), through INTEGER NOT NULL)';

/**
 * Opens (creating if need be) the index file at start-up. When it is new or of another
 * version, `beforeRebuild` runs first, so the store records that every message needs
 * indexing before the empty index is marked current: a crash between the two leaves work
 * to redo, never an index that silently misses mail.
 */
export const prepareSearchIndexFile = (file: string, options: OpenOptions, beforeRebuild: () => void): void => {
  const db = connect(file, options);
  try {
    pragma(db, 'journal_mode = WAL');
    db.exec(WRITES);
    db.exec(INDEX_STATE);
    if (pragma(db, 'user_version') === SCHEMA_VERSION) return;
    beforeRebuild();
    db.transaction(() => {
      db.exec('DROP TABLE IF EXISTS messages_fts');
      // The store listed every message for indexing (beforeRebuild): the next start sets the mark.
      db.exec('DELETE FROM index_state');
      // Logged like any write, as touching every row id: no count is brought forward over it.
      db.exec('INSERT INTO index_writes (lowest) VALUES (0)');
      db.exec(SCHEMA);
      pragma(db, `user_version = ${SCHEMA_VERSION}`);
    }).immediate();
  } finally {
    db.close();
  }
};

/** The index's one writer; commits are durable (synchronous=FULL) before `index` returns. */
export class SearchIndexFileWriter extends Repo {
  static open(file: string, options: OpenOptions = {}): SearchIndexFileWriter {
    const db = connect(file, options);
    pragma(db, 'journal_mode = WAL');
    pragma(db, 'synchronous = FULL');
    return new SearchIndexFileWriter(db);
  }

  /**
   * One transaction, so FTS5 writes one segment for the lot. Each entry replaces an earlier
   * one of its row id (a message indexed again after a restart); a delete of a row id the
   * index lacks costs next to nothing (docs/contributing/benchmarks.md).
   */
  index(entries: IndexEntry[], through?: number): void {
    this.db
      .transaction(() => {
        if (through !== undefined) {
          this.sql('INSERT INTO index_state (id, through) VALUES (1, ?) ON CONFLICT (id) DO UPDATE SET through = max(through, excluded.through)').run(through);
        }
        for (const { rowId, folderId, text } of entries) {
          this.sql('DELETE FROM messages_fts WHERE rowid = ?').run(rowId);
          this.sql("INSERT INTO messages_fts (rowid, folder, subject, participants, body) VALUES (?, 'f' || ?, ?, ?, ?)").run(
            rowId,
            folderId,
            text.subject,
            text.participants,
            text.body,
          );
        }
        // A loop, not Math.min(...): a batch of queued messages can be larger than the argument limit.
        if (entries.length > 0) this.logWrite(entries.reduce((lowest, entry) => Math.min(lowest, entry.rowId), Number.POSITIVE_INFINITY));
      })
      .immediate();
  }

  trimAbove(rowId: number): void {
    // IMMEDIATE, as every write: a deferred one that reads first fails at once (SQLITE_BUSY)
    // when another connection wrote in between, instead of waiting for the lock.
    this.db
      .transaction(() => {
        this.sql('DELETE FROM messages_fts WHERE rowid > ?').run(rowId);
        this.sql('UPDATE index_state SET through = min(through, ?)').run(rowId);
        this.logWrite(rowId + 1);
      })
      .immediate();
  }

  /** Every write transaction of the index goes through here (see WRITES). */
  private logWrite(lowest: number): void {
    this.sql('INSERT INTO index_writes (lowest) VALUES (?)').run(lowest);
    this.sql('DELETE FROM index_writes WHERE seq <= (SELECT max(seq) FROM index_writes) - ?').run(WRITES_KEPT);
  }

  close(): void {
    if (this.db.open) this.db.close();
  }
}

/** The writer on the caller's thread: the fallback when the app is given no search worker (src/app/workers.ts). */
export class InlineIndexWriter implements IndexWriter {
  constructor(private readonly writer: SearchIndexFileWriter) {}

  async index(entries: IndexEntry[], through?: number): Promise<void> {
    this.writer.index(entries, through);
  }

  async trimAbove(rowId: number): Promise<void> {
    this.writer.trimAbove(rowId);
  }

  /** Every `index` call has already committed by the time it returned. */
  async settle(): Promise<void> {}

  async close(): Promise<void> {
    this.writer.close();
  }
}

/** Restricts an FTS5 query to one folder's messages, through the index's folder token. */
export const inFolder = (folderId: number, match: string): string => `folder : "f${folderId}" AND (${match})`;

/** Restricts an FTS5 query to the messages of these folders (a mailbox's, for a search across its folders). */
export const inFolders = (folderIds: readonly number[], match: string): string => `(${folderIds.map((id) => `folder : "f${id}"`).join(' OR ')}) AND (${match})`;

/**
 * Queries on a connection of the main thread that only reads. It never takes a lock the
 * writer waits for (WAL readers read a snapshot), and sees each writer commit at its next query.
 *
 * It is opened read-write all the same: it closes last at shutdown (after the writer's thread
 * ends, or ended idle long before), and the last connection to close checkpoints the WAL into
 * the file and deletes the -wal and -shm files only if it can write
 * (https://www.sqlite.org/wal.html, "Persistence of WAL mode"); a read-only one left them.
 */
export class SearchIndexReader extends Repo {
  private readonly counts = new MatchCounts();

  static open(file: string, options: OpenOptions = {}): SearchIndexReader {
    const db = connect(file, options);
    startMapping(db); // see MMAP_BYTES: a search reads doclists of many pages
    return new SearchIndexReader(db);
  }

  /** See unmapPages: the index's pages a search read leave this process's RSS. */
  unmapPages(): void {
    unmapPages(this.db);
  }

  /**
   * How many entries match, and a page of their row ids, highest first, read in one
   * transaction so that both are of the same index. The count is the costly half (the page
   * stops after `limit` rows): it is kept, and brought forward over new entries (MatchCounts).
   */
  page(match: string, limit: number, offset: number): { total: number; ids: number[] } {
    return this.db.transaction(() => {
      const total = this.counts.get(match, this.position(), (earlier) => this.countFrom(match, earlier));
      return { total, ids: total <= offset ? [] : this.newestFirst(match, limit, offset) };
    })();
  }

  /** Inside a read transaction, whose snapshot the data_version read first begins. */
  private position(): IndexPosition {
    return {
      version: pragma(this.db, 'data_version') as number,
      seq: (this.sql('SELECT max(seq) FROM index_writes').pluck().get() as number | null) ?? 0,
      // The table FTS5 keeps one row per entry in (columnsize): its highest key is the highest entry.
      high: (this.sql('SELECT max(id) FROM messages_fts_docsize').pluck().get() as number | null) ?? 0,
    };
  }

  /**
   * An earlier count brought forward when every write since (all logged, none left out)
   * touched only row ids above its highest: the entries it counted are as they were, and
   * the new ones are counted from there. Otherwise counted again.
   */
  private countFrom(match: string, earlier: Counted | undefined): number {
    if (!earlier) return this.count(match);
    const since = this.sql('SELECT min(seq) AS first, min(lowest) AS lowest FROM index_writes WHERE seq > ?').get(earlier.seq) as {
      first: number | null;
      lowest: number | null;
    };
    if (since.first !== earlier.seq + 1 || since.lowest === null || since.lowest <= earlier.high) return this.count(match);
    // A BigInt: FTS5 seeks to an integer row id, but ignores a floating-point bound and walks every match.
    const above = this.sql('SELECT count(*) FROM messages_fts WHERE messages_fts MATCH ? AND rowid > ?').pluck().get(match, BigInt(earlier.high));
    return earlier.total + (above as number);
  }

  /** The index's mark (INDEX_STATE), or null when it has none yet. */
  through(): number | null {
    return (this.sql('SELECT through FROM index_state WHERE id = 1').pluck().get() as number | undefined) ?? null;
  }

  count(match: string): number {
    return this.sql('SELECT count(*) FROM messages_fts WHERE messages_fts MATCH ?').pluck().get(match) as number;
  }

  /** Row ids, highest first: within a folder that is newest first (see MessageRepo.search). */
  newestFirst(match: string, limit: number, offset: number): number[] {
    return this.sql('SELECT rowid FROM messages_fts WHERE messages_fts MATCH ? ORDER BY rowid DESC LIMIT ? OFFSET ?')
      .pluck()
      .all(match, limit, offset) as number[];
  }

  all(match: string): number[] {
    return this.sql('SELECT rowid FROM messages_fts WHERE messages_fts MATCH ?').pluck().all(match) as number[];
  }

  close(): void {
    if (this.db.open) this.db.close();
  }
}
