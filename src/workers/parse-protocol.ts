import type { ParsedMessage } from '../core/parsed-message.js';

/**
 * Messages between the parse pool and its threads. Buffers cross as plain Uint8Arrays
 * (structured clone drops the Buffer prototype); the pool turns them back into Buffers.
 */
export interface ParseRequest {
  id: number;
  raw: Uint8Array;
}

/** What crosses back: ParsedMessage with each attachment's content as a Uint8Array. */
export type WireParsedMessage = Omit<ParsedMessage, 'attachments'> & {
  attachments: Array<Omit<ParsedMessage['attachments'][number], 'content'> & { content: Uint8Array }>;
};

export type ParseReply =
  | { type: 'ready' }
  | { type: 'parsed'; id: number; parsed: WireParsedMessage }
  | { type: 'failed'; id: number; error: string };
