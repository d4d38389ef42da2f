import { withoutTrailingSpace, type PackedText, type PackedTexts } from '../core/packed-text.js';
import type { ParsedMessage } from '../core/parsed-message.js';
import type { ContentFallback, StoredBody, StoredContent } from '../core/stored-message.js';

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
  /** The junk filter's features are wanted (ParseWants). */
  junkFeatures?: true;
}

type Texts = Pick<StoredContent, 'text' | 'html' | 'extractedText' | 'extractedHtml'>;

/** The stored body as it crosses: a text its packed form holds as it is, or says, is left out of the content (see bodyToWire). */
export type WireBody = Omit<StoredBody, 'content'> & { content: Omit<StoredContent, keyof Texts> & Partial<Texts> };

/**
 * What crosses back: the parsed header fields and the stored body. The text, HTML and
 * attachment list are in the body already; they are not sent twice (see parse-pool.ts).
 */
export type WireParsedMessage = Omit<ParsedMessage, 'text' | 'html' | 'attachments' | 'body'> & { body: WireBody };

/**
 * Each text crosses once. A long text is packed as it is (src/core/packed-text.ts), and a new
 * text equal to its text is packed as null: the content leaves those out, and bodyFromWire
 * takes them from the packed form. A 24 MB text crossed three times (text, packed text, new
 * text), 72 MB written by one thread and read by the other.
 */
export const bodyToWire = (body: StoredBody): WireBody => {
  const { packed } = body;
  const { text, html, extractedText, extractedHtml, ...content } = body.content;
  const kept = (value: PackedText | null): boolean => value === null || typeof value === 'string';
  return {
    ...body,
    content: {
      ...content,
      ...(typeof packed.text === 'string' ? {} : { text }),
      ...(html !== null && typeof packed.html === 'string' ? {} : { html }),
      ...(kept(packed.extractedText) ? {} : { extractedText }),
      ...(kept(packed.extractedHtml) ? {} : { extractedHtml }),
    },
  };
};

/** The body as built, from what crossed; `packed` as it is now on this side (parse-pool.ts). */
export const bodyFromWire = (body: WireBody, packed: PackedTexts): StoredBody => {
  const { content } = body;
  const text = content.text ?? (packed.text as string);
  const html = content.html !== undefined ? content.html : (packed.html as string);
  const extractedText = content.extractedText ?? (packed.extractedText === null ? withoutTrailingSpace(text) : (packed.extractedText as string));
  const extractedHtml = content.extractedHtml !== undefined ? content.extractedHtml : packed.extractedHtml === null ? html : (packed.extractedHtml as string);
  return { ...body, packed, content: { ...content, text, html, extractedText, extractedHtml } };
};

export type ParseResult = { type: 'parsed'; id: number; parsed: WireParsedMessage } | { type: 'failed'; id: number; error: string };

export type ParseReply = { type: 'ready' } | { type: 'results'; results: ParseResult[] };
