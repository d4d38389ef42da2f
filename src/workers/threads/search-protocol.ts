import type { IndexEntry } from '../../core/search-index.js';

/** What a search thread is started with (workerData). */
export interface SearchThreadData {
  /** The index file (store/search-db.ts). */
  file: string;
  /** In the single executable: the better-sqlite3 addon file the main thread loaded. */
  nativeBindingFile?: string;
}

export type SearchRequest =
  | { type: 'index'; seq: number; entries: IndexEntry[]; through?: number }
  | { type: 'trim'; seq: number; rowId: number }
  /** Closes the index file; the thread then ends. */
  | { type: 'close'; seq: number };

export type SearchReply = { type: 'ready' } | { type: 'done'; seq: number } | { type: 'failed'; seq: number; error: string };
