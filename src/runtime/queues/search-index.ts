import type { Logger } from '../../core/logger.js';
import type { SearchIndexService } from '../../services/mail/search-index.js';
import type { QueueRun, QueueWork } from '../queue-runner.js';

/**
 * How long stored mail waits before the indexer takes it (the queue's kick delay). FTS5 pays
 * for a new segment (and its merges) at each commit, so the mail of a quarter second indexed
 * at once costs far less per message than one commit per stored message
 * (docs/contributing/benchmarks.md). A search never waits for it: it indexes what is still
 * queued first.
 */
export const INDEX_DELAY_MS = 250;

export interface SearchIndexRun extends QueueRun {
  indexed: number;
}

/**
 * Moves stored mail into the full-text index (src/services/mail/search-index.ts): the queue,
 * then any backfill (rows land there at run time only when a queued message's text is missing,
 * which a search cannot index in its own turn: the raw bytes need a parse). Kicked when mail is
 * stored, and by the lease keeper's look (a node that died leaves its waiting texts to it);
 * nothing in it waits for a time.
 */
export const searchIndexQueue = (searchIndex: SearchIndexService, logger: Logger): QueueWork<SearchIndexRun> => ({
  async run() {
    try {
      // What a node that died left waiting, once its lease ran out: indexed again from the backfill below.
      await searchIndex.takeOverWaiting();
      let indexed = await searchIndex.indexQueued();
      if (await searchIndex.hasBackfill()) indexed += await searchIndex.indexBackfill();
      return { indexed, next: null };
    } catch (error) {
      logger.error('search indexing failed', { error: error instanceof Error ? error.message : String(error) });
      return { indexed: 0, next: null };
    }
  },
});
