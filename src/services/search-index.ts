import type { Logger } from '../core/logger.js';
import type { Store } from '../store/index.js';
import { parseMessage, searchTextOf } from './parse.js';

/** Queued messages moved into the index per statement. */
const INDEX_BATCH = 1000;
/** Messages parsed again per backfill transaction. */
const BACKFILL_BATCH = 200;

/**
 * Feeds the full-text index from its queue (migration 007). The indexer worker moves queued
 * mail in batches a little after it is stored; a search first indexes whatever is still
 * queued, so it always sees every message committed before it.
 */
export class SearchIndexService {
  constructor(
    private readonly store: Store,
    private readonly logger: Logger,
  ) {}

  /** Indexes everything queued, in the caller's turn (a search runs this first). */
  catchUp(): void {
    if (!this.store.searchIndex.hasQueued()) return;
    this.store.transaction(() => {
      while (this.store.searchIndex.indexQueued(INDEX_BATCH) === INDEX_BATCH) { /* until the queue is empty */ }
    });
  }

  /**
   * Indexes everything queued in batches of the shared group commit (the worker's path):
   * the index's one commit per batch rides with stored mail. Returns how many were indexed.
   */
  async indexQueued(): Promise<number> {
    let indexed = 0;
    for (;;) {
      const moved = await this.store.groupCommit(() => this.store.searchIndex.indexQueued(INDEX_BATCH));
      indexed += moved;
      if (moved < INDEX_BATCH) return indexed;
    }
  }

  /**
   * Start-up, before any listener opens: indexes from their raw bytes the messages stored
   * before the index had a folder column (migration 7) and those still queued when the last
   * process stopped (their texts were in its memory). So no search ever misses them.
   */
  async prepare(): Promise<number> {
    this.store.transaction(() => this.store.searchIndex.backfillQueued());
    const total = this.store.searchIndex.backfillCount();
    if (total === 0) return 0;
    this.logger.info('re-indexing stored mail for search', { messages: total });
    const done = await this.indexBackfill();
    this.logger.info('search index ready', { messages: done });
    return done;
  }

  hasBackfill(): boolean {
    return this.store.searchIndex.backfillCount() > 0;
  }

  /** Indexes the backfill from the messages' raw bytes; returns how many were indexed. */
  async indexBackfill(): Promise<number> {
    let done = 0;
    for (;;) {
      const batch = this.store.searchIndex.backfillBatch(BACKFILL_BATCH);
      if (batch.length === 0) return done;
      const texts = await Promise.all(batch.map(async (item) => searchTextOf(await parseMessage(item.raw))));
      await this.store.groupCommit(() => batch.forEach((item, index) => this.store.searchIndex.indexBackfilled(item, texts[index])));
      done += batch.length;
    }
  }
}
