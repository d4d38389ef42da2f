import type { IndexEntry } from '../core/search-index.js';
import type { WorkerReply } from './worker-slot.js';

/** What a search worker is started with (workerData). */
export interface SearchWorkerData {
  /** The index file (store/search-db.ts). */
  file: string;
  /** In the single executable: the better-sqlite3 addon file the main thread loaded. */
  nativeBindingFile?: string;
}

/**
 * Messages between the search writer (search-writer.ts) and its thread, in the shape
 * every worker thread speaks (worker-slot.ts): arrays of requests one way, of results the other.
 * The thread does its requests one at a time, in order, so every request before an answered one
 * is done.
 */
export type SearchRequest =
  | { id: number; type: 'index'; entries: IndexEntry[]; through?: number }
  | { id: number; type: 'trim'; rowId: number }
  /** Closes the index file; the thread then ends. */
  | { id: number; type: 'close' };

export type SearchResult = { id: number } | { id: number; error: string };

export type SearchReply = WorkerReply<SearchResult>;
