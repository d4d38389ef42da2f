export { SEARCH_TEXT } from './events.js';

/** What the full-text index holds of a message. */
export interface SearchText {
  subject: string;
  participants: string;
  body: string;
}

/**
 * The full-text index holds this much of a message's text: its first MiB of characters. A
 * longer text is searched by its start (docs/agents/contract-decisions.md, "Search"). Each
 * stored message's text waits in memory for the index thread, which gets a copy: 16 texts of
 * 24 MB arriving together held some 350 MB more at the peak (docs/contributing/benchmarks.md).
 */
export const INDEXED_TEXT_MAX_CHARS = 1024 * 1024;

/**
 * What the index holds of a text: all of it, or its start in a string of its own, so the whole
 * text is not kept alive by the queue (a slice of a long string points into it). A surrogate
 * pair is not cut in two.
 */
export const indexedText = (text: string): string => {
  if (text.length <= INDEXED_TEXT_MAX_CHARS) return text;
  const end = /[\ud800-\udbff]/.test(text[INDEXED_TEXT_MAX_CHARS - 1]) ? INDEXED_TEXT_MAX_CHARS - 1 : INDEXED_TEXT_MAX_CHARS;
  return Buffer.from(text.slice(0, end), 'utf16le').toString('utf16le');
};

/**
 * A removed message's entry: no folder (folder ids start at 1, and every search is scoped to
 * one) and no text, so nothing matches it.
 */
export const REMOVED_FOLDER = 0;
export const REMOVED_TEXT: SearchText = { subject: '', participants: '', body: '' };

/** One message's entry in the index: its row id in `messages`, its folder, its text. */
export interface IndexEntry {
  rowId: number;
  folderId: number;
  text: SearchText;
}

/**
 * Where the full-text index is written. The index is a file of its own, written by one
 * connection that main.ts places either on a thread of its own (workers/search-writer.ts)
 * or on the main thread (store/search-db.ts); the services see only this.
 */
export interface IndexWriter {
  /**
   * Resolves once the entries are durable in the index; each replaces any earlier entry of its
   * row id. With `through`, the index's mark moves up to it in the same transaction: every
   * message with a row id up to it is indexed, removed, or listed for the backfill.
   */
  index(entries: IndexEntry[], through?: number): Promise<void>;
  /** Drops every entry above `rowId`, and the mark with them: their messages went with an unsynced tail of the store. */
  trimAbove(rowId: number): Promise<void>;
  /**
   * Resolves once everything handed over so far is in the index, without blocking the event
   * loop: a search awaits it first. Rejects with AppError('unavailable') when the writer
   * cannot finish in time.
   */
  settle(): Promise<void>;
  close(): Promise<void>;
}
