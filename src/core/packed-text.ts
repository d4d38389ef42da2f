import { deflateRawSync, inflateRawSync } from 'node:zlib';
import type { PackedText, PackedTexts, StoredContent } from './stored-message.js';

export type { PackedText, PackedTexts } from './stored-message.js';

/**
 * How the texts of a stored body are kept compact (migration 11): they are written with every
 * message, so their bytes count twice (WAL and database) on the ingest path.
 *
 * - Text and HTML up to COMPRESS_MAX_BYTES are stored as raw DEFLATE (RFC 1951) of their
 *   UTF-8 (a BLOB); larger ones, and short ones, as plain TEXT. Reading tells them apart by
 *   type. The limit keeps each compression short (docs/contributing/benchmarks.md).
 * - The new text of a message that quotes nothing is its text (without trailing white space),
 *   and the new HTML of one without a quote its HTML: those are not stored twice (null).
 *
 * The body's builder packs them (src/mime/parse.ts, on a parse worker for received mail), so
 * the store's writer on the main thread only copies the bytes.
 */
const COMPRESS_MIN_BYTES = 128;
const COMPRESS_MAX_BYTES = 64 * 1024;

export const packText = (text: string): PackedText => {
  const bytes = Buffer.byteLength(text);
  return bytes < COMPRESS_MIN_BYTES || bytes > COMPRESS_MAX_BYTES ? text : exactly(deflateRawSync(text, { level: 1 }));
};

/**
 * zlib's synchronous calls answer with a view of their output chunk: 16 KB on Node 20, 64 KB on
 * Node 24, for a deflated text of a few hundred bytes. A structured clone copies the whole
 * buffer behind a view, so each packed text crossing back from a parse worker was a 64 KB copy,
 * and the main thread held a 64 KB array buffer per text until a full collection: under a
 * burst, most of the C heap's peak (docs/contributing/benchmarks.md).
 * A copy of exactly its bytes crosses as those bytes.
 */
const exactly = (view: Buffer): Buffer =>
  view.byteLength === view.buffer.byteLength ? view : Buffer.from(view.buffer.slice(view.byteOffset, view.byteOffset + view.byteLength));

export const unpackText = (value: PackedText): string => (typeof value === 'string' ? value : inflateRawSync(value).toString('utf8'));

export const withoutTrailingSpace = (text: string): string => text.trimEnd();

type Texts = Pick<StoredContent, 'text' | 'html' | 'extractedText' | 'extractedHtml'>;

export const packTexts = ({ text, html, extractedText, extractedHtml }: Texts): PackedTexts => ({
  text: packText(text),
  html: html === null ? null : packText(html),
  extractedText: extractedText === withoutTrailingSpace(text) ? null : packText(extractedText),
  extractedHtml: extractedHtml === null || extractedHtml === html ? null : packText(extractedHtml),
});

export const unpackTexts = (packed: PackedTexts): Texts => {
  const text = unpackText(packed.text);
  const html = packed.html === null ? null : unpackText(packed.html);
  return {
    text,
    html,
    extractedText: packed.extractedText === null ? withoutTrailingSpace(text) : unpackText(packed.extractedText),
    extractedHtml: packed.extractedHtml === null ? html : unpackText(packed.extractedHtml),
  };
};
