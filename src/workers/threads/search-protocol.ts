import type { IndexEntry } from '../../core/search-index.js';

/** What a search thread is started with (workerData). */
export interface SearchThreadData {
  /** The index file (store/search-db.ts). */
  file: string;
  /**
   * Two Int32 slots the thread writes after each request: [0] the sequence number of the last
   * request done, [1] that of the last one that failed. The main thread waits on [0] with
   * Atomics.wait when a search needs the index caught up before it queries.
   */
  progress: SharedArrayBuffer;
  /** In the single executable: the better-sqlite3 addon file the main thread loaded. */
  nativeBindingFile?: string;
}

export type SearchRequest =
  | { type: 'index'; seq: number; entries: IndexEntry[] }
  | { type: 'trim'; seq: number; rowId: number }
  /** Closes the index file; the thread then ends. */
  | { type: 'close'; seq: number };

export type SearchReply =
  | { type: 'ready' }
  | { type: 'done'; seq: number }
  | { type: 'failed'; seq: number; error: string };

export const DONE_SLOT = 0;
export const FAILED_SLOT = 1;
