import type { Logger } from '../../core/logger.js';
import type { SearchIndexService } from '../../services/mail/search-index.js';
import { KickedJob } from './kicked-job.js';

/**
 * How long stored mail waits in the queue before the indexer takes it. FTS5 pays for a new
 * segment (and its merges) at each commit, so the mail of a quarter second indexed at once
 * costs far less per message than one commit per stored message: on bench:ingest, 250 ms
 * gave about 10% more messages/s than 50 ms. A search never waits for it (it indexes what
 * is still queued first, at most a quarter second of mail).
 */
export const INDEX_DELAY_MS = 250;

/** Moves queued mail into the full-text index: kicked when mail is stored, one run at a time. */
export class SearchIndexer {
  private readonly job: KickedJob;

  constructor(
    private readonly searchIndex: SearchIndexService,
    private readonly logger: Logger,
    delayMs = INDEX_DELAY_MS,
  ) {
    this.job = new KickedJob(
      () =>
        this.indexAll().catch((error: unknown) =>
          this.logger.error('search indexing failed', { error: error instanceof Error ? error.message : String(error) }),
        ),
      delayMs,
    );
  }

  kick(): void {
    this.job.kick();
  }

  /** Stops kicks and waits for a run in progress, so the store can close after it. */
  stop(): Promise<void> {
    return this.job.stop();
  }

  /**
   * The queue, then any backfill: rows land there at run time only when a queued message's
   * text is missing, which a search cannot index in its own turn (the raw bytes need a parse).
   */
  private async indexAll(): Promise<void> {
    await this.searchIndex.indexQueued();
    if (this.searchIndex.hasBackfill()) await this.searchIndex.indexBackfill();
  }
}
