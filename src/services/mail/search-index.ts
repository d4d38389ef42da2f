import type { Clock } from '../../core/clock.js';
import type { NodeLease } from '../../core/cluster.js';
import { SEARCH_TEXT } from '../../core/events.js';
import type { Logger } from '../../core/logger.js';
import type { ParseMail } from '../../core/parsed-message.js';
import type { IndexEntry, IndexWriter } from '../../core/search-index.js';
import { searchTextOf } from '../../mime/parse.js';
import type { Store } from '../../store/index.js';

/** Messages parsed again per backfill step. */
const BACKFILL_BATCH = 200;

/** One hand-over to the index writer. */
interface IndexBatch {
  removals: Awaited<ReturnType<Store['searchIndex']['removals']>>;
  entries: IndexEntry[];
  through: number | undefined;
}

/**
 * Feeds the full-text index. The index is its own file, written by an IndexWriter (on a
 * thread of its own when there is one), so tokenizing stored mail leaves the event loop that
 * runs SMTP and the group commit; nothing about it is written to the store on the way in.
 *
 * A stored message's text is heard of from the commit feed once its transaction committed
 * (SEARCH_TEXT) and waits here, in memory, in commit order. The indexer's run hands what waits to
 * the writer in one batch, which moves the index's mark up to the batch's last row id in the
 * same transaction; only then does it leave memory. A stop loses what waits here: the next
 * start lists every message above the mark for the backfill, which indexes it from its raw
 * bytes. A search first hands over whatever waits and waits for the writer, so it always sees
 * every message committed before it.
 *
 * Several processes on one store (docs/design.md, "Several processes on one store"): each
 * indexes what it stored. The storing transaction also writes this node's row of
 * `search_waiting` (migration 88), at or below every text waiting here, under a lease; once a
 * batch is durable in the index the row moves up to what still waits, or goes. A node that
 * dies leaves its row: when its lease runs out another node lists every message from its
 * lowest up for the backfill (at start, a node takes its own row over at once). A search
 * through one process sees mail another process stored once that process has indexed it.
 */
export class SearchIndexService {
  /** Texts of committed messages not yet durable in the index, by row id (commit order is row id order). */
  private readonly waiting = new Map<number, IndexEntry>();
  /** Row ids up to here are with the writer already; reset when a hand-over fails. */
  private handedOver = 0;

  constructor(
    private readonly store: Store,
    private readonly logger: Logger,
    private readonly writer: IndexWriter,
    /** The parse workers: indexing stored mail again parses its raw bytes, never on the main thread. */
    private readonly parse: ParseMail,
    private readonly clock: Clock,
    /** This node and how long its claims hold (docs/design.md, "Several processes on one store"). */
    private readonly node: NodeLease,
  ) {
    store.feed.beforeCommit<IndexEntry>([SEARCH_TEXT], async (entries) => {
      const lowest = entries.reduce((low, { payload }) => Math.min(low, payload.rowId), Number.POSITIVE_INFINITY);
      await this.store.searchIndex.markWaiting(this.node.nodeId, lowest, this.leaseUntil());
    });
    store.feed.subscribe<IndexEntry>(SEARCH_TEXT, (entries) => {
      for (const { payload } of entries) this.waiting.set(payload.rowId, payload);
    });
  }

  /** Hands everything waiting to the writer and resolves once it is indexed (a search awaits this first). */
  async catchUp(): Promise<void> {
    // indexBatch gives the batch to the writer before its first await; settle then waits for it.
    const batch = await this.takeBatch();
    if (batch !== null) void this.indexBatch(batch).catch((error: unknown) => this.logFailure(error));
    return this.writer.settle();
  }

  /** The indexer's run: hands over what waits and resolves once it is indexed. Returns how many. */
  indexQueued(): Promise<number> {
    return this.handOver();
  }

  /**
   * Lists for the backfill what nodes that died left waiting, once their lease ran out
   * (`includingOwn`: at start, this node's own row too, from before it started). Returns how
   * many nodes' rows were taken over.
   */
  async takeOverWaiting(includingOwn = false): Promise<number> {
    const now = this.clock.now().getTime();
    const own = includingOwn ? this.node.nodeId : null;
    // Read first: the indexer looks at every run, and almost always finds nothing to take.
    if ((await this.store.searchIndex.waitingToTakeOver(now, own)).length === 0) return 0;
    return await this.store.transaction(() => this.store.searchIndex.takeOverWaiting(now, own));
  }

  private leaseUntil(): number {
    return this.clock.now().getTime() + this.node.leaseMs;
  }

  /** Messages the index has not taken yet: waiting here, and listed for the backfill (the status page). */
  async backlog(): Promise<number> {
    return this.waiting.size + (await this.store.searchIndex.backfillCount());
  }

  /**
   * Start-up, before any listener opens: drops index entries of messages the store lost with an
   * unsynced tail (a power failure), lists for the backfill every message committed above the
   * index's mark (their texts were in the last process's memory), and indexes the backfill, so no
   * search misses or mistakes a message. An index without a mark (new, or from before the mark)
   * has every message it lacks listed already: its mark starts at the store's last message.
   */
  async prepare(): Promise<number> {
    const last = await this.store.searchIndex.lastMessageRowId();
    await this.writer.trimAbove(last);
    const through = await this.store.searchIndex.indexedThrough();
    if (through === null) await this.writer.index([], last);
    const now = this.clock.now().getTime();
    await this.store.transaction(async () => {
      // Above `last` too: another node may have indexed mail it stored after `last` was read, and the trim removed it.
      await this.store.searchIndex.backfillAbove(Math.min(through ?? last, last));
      await this.store.searchIndex.takeOverWaiting(now, this.node.nodeId);
    });
    const total = await this.store.searchIndex.backfillCount();
    if (total === 0) return 0;
    this.logger.info('indexing stored mail for search', { messages: total });
    const done = await this.indexBackfill();
    this.logger.info('search index ready', { messages: done });
    return done;
  }

  async hasBackfill(): Promise<boolean> {
    return (await this.store.searchIndex.backfillCount()) > 0;
  }

  /** Indexes the backfill from the messages' raw bytes; returns how many were indexed. */
  async indexBackfill(): Promise<number> {
    let done = 0;
    for (;;) {
      const batch = await this.store.searchIndex.backfillBatch(BACKFILL_BATCH);
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
   * Hands the waiting texts not yet with the writer to it, in one batch that moves the mark to
   * the last of them; once they are indexed, they leave memory. Removed messages go in the same
   * batch, first, as blank entries (SearchIndexRepo.forget), and a text still waiting for a
   * message removed since is dropped. Only the removals cost a commit of the store.
   */
  private async handOver(): Promise<number> {
    const batch = await this.takeBatch();
    return batch === null ? 0 : await this.indexBatch(batch);
  }

  /** What waits for the writer and was not handed to it yet: removals first, then texts; null when nothing. */
  private async takeBatch(): Promise<IndexBatch | null> {
    const removals = await this.store.searchIndex.removals();
    for (const { entry } of removals) this.waiting.delete(entry.rowId);
    const entries = [...this.waiting.values()].filter((entry) => entry.rowId > this.handedOver);
    if (entries.length === 0 && removals.length === 0) return null;
    const through = entries.length > 0 ? entries[entries.length - 1].rowId : undefined;
    if (through !== undefined) this.handedOver = through;
    return { removals, entries, through };
  }

  /** Gives `batch` to the writer at once (before any await), then records it indexed. Returns how many texts. */
  private async indexBatch({ removals, entries, through }: IndexBatch): Promise<number> {
    try {
      await this.writer.index([...removals.map((removal) => removal.entry), ...entries], through);
    } catch (error) {
      // Nothing left memory: everything waiting is handed over again next time.
      this.handedOver = 0;
      throw error;
    }
    for (const entry of entries) this.waiting.delete(entry.rowId);
    // One commit of the store for the lot, its sync off the event loop (the group commit's).
    if (entries.length > 0 || removals.length > 0) {
      await this.store.groupCommit(async () => {
        if (entries.length > 0) await this.settleWaiting();
        if (removals.length > 0) await this.store.searchIndex.removed(removals.map((removal) => removal.seq));
      });
    }
    return entries.length;
  }

  /**
   * Inside a transaction: this node's row now covers only what still waits (the map is in
   * commit order), or goes. Read when the transaction runs, so texts heard of meanwhile count.
   */
  private async settleWaiting(): Promise<void> {
    const [lowest] = this.waiting.keys();
    await this.store.searchIndex.settleWaiting(this.node.nodeId, lowest ?? null, this.leaseUntil());
  }

  private logFailure(error: unknown): void {
    this.logger.error('search indexing failed', { error: error instanceof Error ? error.message : String(error) });
  }
}
