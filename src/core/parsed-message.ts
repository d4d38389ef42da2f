import type { AddressEntry, AttachmentMeta } from './types.js';

/**
 * What we keep of a parsed message. Received content is untrusted: every field here is
 * plain data; nothing is rendered, fetched or executed, and attachment names are never
 * used as paths.
 */
export interface ParsedMessage {
  messageId: string | null;
  inReplyTo: string | null;
  references: string[];
  subject: string;
  from: AddressEntry | null;
  to: AddressEntry[];
  cc: AddressEntry[];
  date: number | null;
  text: string | null;
  html: string | null;
  attachments: ParsedAttachment[];
  encrypted: boolean;
}

export interface ParsedAttachment extends AttachmentMeta {
  content: Buffer;
}

/**
 * How inbound mail gets parsed. Injected so the service does not care where the work runs:
 * main.ts hands in a pool of worker threads, or the in-thread parser when there is none.
 */
export type ParseMail = (raw: Buffer) => Promise<ParsedMessage>;
