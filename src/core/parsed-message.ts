import type { StoredBody } from './stored-message.js';
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
  attachments: AttachmentMeta[];
  encrypted: boolean;
  /**
   * What a read and an IMAP FETCH are served from (src/core/stored-message.ts); null for a
   * message we composed ourselves, whose stored body a parse worker builds afterwards.
   */
  body: StoredBody | null;
  /**
   * What the junk filter counts of a received message (src/mime/junk-tokens.ts): feature
   * hashes, made by the parse (on a parse worker); absent for a message composed here.
   */
  junkFeatures?: Int32Array;
}

/**
 * How mail gets parsed. Injected so the services do not care where the work runs: main.ts
 * hands in a pool of worker threads that enforces the parse's time budget.
 */
export type ParseMail = (raw: Buffer, wants?: ParseWants) => Promise<ParsedMessage>;

/** What a parse computes beyond the stored body and the fields. */
export interface ParseWants {
  /** The junk filter's features (src/mime/junk-tokens.ts): only mail that will be judged or trained needs them. */
  junkFeatures?: boolean;
}
