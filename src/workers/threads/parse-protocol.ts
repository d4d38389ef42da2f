import type { ParsedMessage } from '../../core/parsed-message.js';

/**
 * Messages between the parse pool and its threads. Buffers cross as plain Uint8Arrays
 * (structured clone drops the Buffer prototype); the pool turns them back into Buffers.
 * Each side posts what one turn of its event loop produced as one array: every post wakes
 * the other thread, and on a busy machine that wake-up costs more than the copy.
 */
export interface ParseRequest {
  id: number;
  raw: Uint8Array;
}

/** What crosses back: ParsedMessage with each attachment's content as a Uint8Array. */
export type WireParsedMessage = Omit<ParsedMessage, 'attachments'> & {
  attachments: Array<Omit<ParsedMessage['attachments'][number], 'content'> & { content: Uint8Array }>;
};

export type ParseResult =
  | { type: 'parsed'; id: number; parsed: WireParsedMessage }
  | { type: 'failed'; id: number; error: string };

export type ParseReply = { type: 'ready' } | { type: 'results'; results: ParseResult[] };
