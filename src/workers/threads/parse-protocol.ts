import type { ParsedMessage } from '../../core/parsed-message.js';
import type { ContentFallback, StoredBody } from '../../core/stored-message.js';

/**
 * Messages between the parse pool and its threads. Buffers cross as plain Uint8Arrays
 * (structured clone drops the Buffer prototype). Each side posts what one turn of its event
 * loop produced as one array: every post wakes the other thread, and on a busy machine that
 * wake-up costs more than the copy.
 */
export interface ParseRequest {
  id: number;
  raw: Uint8Array;
  /** Skip the full parse and keep the bounded fallback for this reason (a parse that was cut off). */
  fallback?: ContentFallback;
}

/**
 * What crosses back: the parsed header fields and the stored body. The text, HTML and
 * attachment list are in the body already; they are not sent twice (see parse-pool.ts).
 */
export type WireParsedMessage = Omit<ParsedMessage, 'text' | 'html' | 'attachments' | 'body'> & { body: StoredBody };

export type ParseResult = { type: 'parsed'; id: number; parsed: WireParsedMessage } | { type: 'failed'; id: number; error: string };

export type ParseReply = { type: 'ready' } | { type: 'results'; results: ParseResult[] };
