import type { Logger } from '../../core/logger.js';
import type { SearchIndexService } from '../../services/mail/search-index.js';

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
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<void> | null = null;
  private kickedWhileRunning = false;
  private stopped = false;

  constructor(
    private readonly searchIndex: SearchIndexService,
    private readonly logger: Logger,
    private readonly delayMs = INDEX_DELAY_MS,
  ) {}

  kick(): void {
    if (this.stopped || this.timer !== null) return;
    if (this.running !== null) {
      this.kickedWhileRunning = true;
      return;
    }
    this.timer = setTimeout(() => {
      this.timer = null;
      this.run();
    }, this.delayMs);
  }

  /** Stops kicks and waits for a run in progress, so the store can close after it. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
    await this.running;
  }

  /**
   * The queue, then any backfill: rows land there at run time only when a queued message's
   * text is missing, which a search cannot index in its own turn (the raw bytes need a parse).
   */
  private async indexAll(): Promise<void> {
    await this.searchIndex.indexQueued();
    if (this.searchIndex.hasBackfill()) await this.searchIndex.indexBackfill();
  }

  private run(): void {
    this.running = this.indexAll().then(
      () => undefined,
      (error: unknown) => this.logger.error('search indexing failed', { error: error instanceof Error ? error.message : String(error) }),
    ).finally(() => {
      this.running = null;
      if (this.kickedWhileRunning) {
        this.kickedWhileRunning = false;
        this.kick();
      }
    });
  }
}
