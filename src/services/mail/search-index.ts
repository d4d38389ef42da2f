import type { Logger } from '../../core/logger.js';
import type { IndexEntry, IndexWriter } from '../../core/search-index.js';
import type { Store } from '../../store/index.js';
import type { QueuedEntry } from '../../store/search-index.js';
import type { ParseMail } from '../../core/parsed-message.js';
import { searchTextOf } from '../../mime/parse.js';

/** Messages parsed again per backfill step. */
const BACKFILL_BATCH = 200;

/**
 * Feeds the full-text index from the store's queue. The index is its own file, written by
 * an IndexWriter (on a thread of its own when main.ts has one), so tokenizing stored mail
 * leaves the event loop that runs SMTP and the group commit.
 *
 * Queued messages are handed to the writer in one batch per indexer run, a little after
 * they are stored (workers/jobs/search-indexer.ts); a queued id leaves the queue only once the
 * writer has made its entry durable. A search first hands over whatever is still queued and
 * waits for the writer, so it always sees every message committed before it.
 */
export class SearchIndexService {
  /** Queued ids up to here are with the writer already; reset when a hand-over fails. */
  private handedOver = 0;

  constructor(
    private readonly store: Store,
    private readonly logger: Logger,
    private readonly writer: IndexWriter,
    /** The parse threads: indexing stored mail again parses its raw bytes, never on the main thread. */
    private readonly parse: ParseMail,
  ) {}

  /** Hands everything queued to the writer and resolves once it is indexed (a search awaits this first). */
  catchUp(): Promise<void> {
    // handOver gives the batch to the writer before its first await; settle then waits for it.
    void this.handOver().catch((error: unknown) => this.logFailure(error));
    return this.writer.settle();
  }

  /** The indexer's run: hands over what is queued and resolves once it is indexed. Returns how many. */
  indexQueued(): Promise<number> {
    return this.handOver();
  }

  /**
   * Start-up, before any listener opens: drops index entries of messages the store lost
   * with an unsynced tail (a power failure), then indexes from their raw bytes the messages
   * still queued when the last process stopped (their texts were in its memory) and every
   * message of an index that starts empty. So no search misses or mistakes a message.
   */
  async prepare(): Promise<number> {
    await this.writer.trimAbove(this.store.searchIndex.lastMessageRowId());
    this.store.transaction(() => this.store.searchIndex.backfillQueued());
    const total = this.store.searchIndex.backfillCount();
    if (total === 0) return 0;
    this.logger.info('indexing stored mail for search', { messages: total });
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
      const entries = await Promise.all(
        batch.map(async ({ rowId, folderId, raw }): Promise<IndexEntry> => ({ rowId, folderId, text: searchTextOf(await this.parse(raw)) })),
      );
      await this.writer.index(entries);
      await this.store.groupCommit(() => this.store.searchIndex.backfilled(entries));
      done += batch.length;
    }
  }

  /**
   * Hands the queued messages not yet with the writer to it, in one batch; once they are
   * indexed, they leave the queue (with the next group commit: a lost dequeue only means
   * indexing them again). Ids whose text is gone go to the backfill. Removed messages go in
   * the same batch as blank entries (SearchIndexRepo.forget).
   */
  private async handOver(): Promise<number> {
    const removals = this.store.searchIndex.removals();
    const queued = this.store.searchIndex.queuedAfter(this.handedOver);
    if (queued.length === 0 && removals.length === 0) return 0;
    if (queued.length > 0) this.handedOver = queued[queued.length - 1].rowId;
    const entries = queued.filter(hasText);
    const textless = queued.filter((entry) => !hasText(entry)).map((entry) => entry.rowId);
    if (textless.length > 0) this.store.transaction(() => this.store.searchIndex.moveToBackfill(textless));
    // Blanks first: a row id removed and then taken by a new message ends with the new entry.
    const batch = [...removals.map((removal) => removal.entry), ...entries];
    try {
      if (batch.length > 0) await this.writer.index(batch);
    } catch (error) {
      // Nothing left the queue: everything from the start is handed over again next time.
      this.handedOver = 0;
      throw error;
    }
    if (batch.length > 0) {
      await this.store.groupCommit(() => {
        if (entries.length > 0) this.store.searchIndex.dequeue(entries);
        if (removals.length > 0) this.store.searchIndex.removed(removals.map((removal) => removal.seq));
      });
    }
    return entries.length;
  }

  private logFailure(error: unknown): void {
    this.logger.error('search indexing failed', { error: error instanceof Error ? error.message : String(error) });
  }
}

const hasText = (entry: QueuedEntry): entry is IndexEntry => entry.text !== undefined;
