import type { IndexEntry } from '../../core/search-index.js';
import type { ThreadReply } from './thread-slot.js';

/** What a search thread is started with (workerData). */
export interface SearchThreadData {
  /** The index file (store/search-db.ts). */
  file: string;
  /** In the single executable: the better-sqlite3 addon file the main thread loaded. */
  nativeBindingFile?: string;
}

/**
 * Messages between the search writer (search-writer-thread.ts) and its thread, in the shape
 * every worker thread speaks (thread-slot.ts): arrays of requests one way, of results the other.
 * The thread does its requests one at a time, in order, so every request before an answered one
 * is done.
 */
export type SearchRequest =
  | { id: number; type: 'index'; entries: IndexEntry[]; through?: number }
  | { id: number; type: 'trim'; rowId: number }
  /** Closes the index file; the thread then ends. */
  | { id: number; type: 'close' };

export type SearchResult = { id: number } | { id: number; error: string };

export type SearchReply = ThreadReply<SearchResult>;
