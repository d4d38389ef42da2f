import type { AddressObject, ParsedMail } from 'mailparser';
import { packTexts } from '../core/packed-text.js';
import type { ParsedMessage } from '../core/parsed-message.js';
import { STORED_BODY_VERSION, type ContentFallback, type MessageStructure, type StoredBody, type StoredContent } from '../core/stored-message.js';
import type { AddressEntry } from '../core/types.js';
import { indexedText, type SearchText } from '../core/search-index.js';
import { withoutLargeAttachmentBodies } from './attachment-cut.js';
import { attachmentsOf, isAttachment, leafParts } from './attachments.js';
import { extractReplyHtml } from './extract-html.js';
import { extractReplyText } from './extract-text.js';
import { fallbackContent, headerSummary, textOfHtml } from './fallback.js';
import { isTruncated, parseMimeTree, type MimePart } from './mime-tree.js';
import { structureWire } from './imap-notation.js';
import { structureOf } from './structure.js';
import { plainTextStart } from './plain-body.js';
import { simpleShapeOf } from './simple-shape.js';
import { junkFeatures } from './junk-tokens.js';

// The shape lives in core so the injected ParseMail type can name it; re-exported for callers here.
export type { ParsedMessage } from '../core/parsed-message.js';

const PREVIEW_LENGTH = 200;

/** Over this many header bytes the full parse is not tried: the message is over the structure budget. */
export const MAX_HEADER_BYTES = 1024 * 1024;

let mailparser: Promise<typeof import('mailparser')> | undefined;
/**
 * mailparser (megabytes of RSS: docs/contributing/benchmarks.md, "Libraries loaded when first needed"), loaded at the first parse: the parse workers parse the
 * mail, so the main thread rarely needs it. A parse worker loads it as it starts, so its first
 * message's time budget is not spent on loading.
 */
export const loadMailparser = () => (mailparser ??= import('mailparser'));

/**
 * The size budget of html-to-text (mailparser's text of an HTML-only message), whose time
 * grows faster than the square of the nesting depth (docs/contributing/benchmarks.md,
 * "Parsing"). Past this many bytes of HTML, the text comes from the linear textOfHtml instead.
 */
export const HTML_TO_TEXT_MAX_BYTES = 256 * 1024;

export interface ParseOptions {
  /** Skip the full parse and keep the bounded fallback, for this reason (the pool's cut-off). */
  fallback?: ContentFallback;
  /** false: mailparser even for the simple shape (./simple-shape.ts), which the tests compare with it. */
  shortcut?: boolean;
  /** Compute the junk filter's features (ParsedMessage.junkFeatures). */
  junkFeatures?: boolean;
}

/**
 * The whole parse of a received message, run in a parse worker: the MIME structure and
 * the attachments' places (own code, linear, bounded), then text and HTML by mailparser
 * when the message is within the structure budget (read directly, with mailparser's result,
 * for the simple shape of ./simple-shape.ts). When mailparser fails, or is not tried,
 * the top-level header fields and a bounded text are kept instead, and the stored body
 * says why (StoredContent.fallback).
 */
export const parseMessage = async (raw: Buffer, options: ParseOptions = {}): Promise<ParsedMessage> => {
  const tree = parseMimeTree(raw);
  const parsed = await parseTree(raw, tree, options);
  // The junk filter's features are computed where the parse runs (a parse worker), from the tree it built.
  return parsed.body && options.junkFeatures ? { ...parsed, junkFeatures: junkFeatures(tree.headers, parsed.body.structure.root, parsed) } : parsed;
};

const parseTree = async (raw: Buffer, tree: MimePart, options: ParseOptions): Promise<ParsedMessage> => {
  const structure = structureOf(raw, tree);
  const reason = options.fallback ?? (isTruncated(tree) || tree.bodyStart > MAX_HEADER_BYTES ? 'structure' : null);
  if (reason) return fallbackParse(raw, tree, structure, reason);
  const simple = options.shortcut === false ? null : simpleShapeOf(raw, tree);
  if (simple) return withBody(raw, structure, simple.summary, { text: simple.text, html: simple.html }, null);
  const skipHtmlToText = htmlBytes(structure) > HTML_TO_TEXT_MAX_BYTES;
  const { simpleParser } = await loadMailparser();
  let mail: ParsedMail;
  try {
    mail = await simpleParser(withoutLargeAttachmentBodies(raw, structure), {
      skipHtmlToText,
      skipTextToHtml: true,
      skipImageLinks: true,
      skipTextLinks: true,
    });
  } catch {
    return fallbackParse(raw, tree, structure, 'error');
  }
  const html = typeof mail.html === 'string' ? mail.html : null;
  const text = mail.text || (skipHtmlToText && html !== null ? textOfHtml(html) : (mail.text ?? ''));
  return withBody(
    raw,
    structure,
    {
      messageId: mail.messageId ?? null,
      inReplyTo: mail.inReplyTo ?? null,
      references: toList(mail.references),
      subject: mail.subject ?? '',
      from: firstAddress(mail.from),
      to: addressList(mail.to),
      cc: addressList(mail.cc),
      date: dateOf(mail),
    },
    { text, html },
    null,
  );
};

/** Bytes of the inline HTML parts: what html-to-text would be given. */
const htmlBytes = (structure: MessageStructure): number =>
  leafParts(structure.root)
    .filter((leaf) => leaf.contentType === 'text/html' && !isAttachment(leaf))
    .reduce((sum, leaf) => sum + leaf.part.size, 0);

/** Defect-proof parse: what the message's own header says, and a bounded text (src/mime/fallback.ts). */
const fallbackParse = (raw: Buffer, tree: MimePart, structure: MessageStructure, reason: ContentFallback): ParsedMessage =>
  withBody(raw, structure, headerSummary(tree.headers), fallbackContent(raw, structure.root), reason);

type Summary = Omit<ParsedMessage, 'text' | 'html' | 'attachments' | 'encrypted' | 'body'>;

const withBody = (
  raw: Buffer,
  structure: MessageStructure,
  summary: Summary,
  texts: { text: string; html: string | null },
  fallback: ContentFallback | null,
): ParsedMessage => {
  const content: StoredContent = {
    ...texts,
    attachments: attachmentsOf(raw, structure.root),
    references: summary.references,
    fallback,
    ...extractedOf(texts, fallback),
  };
  return withStoredBody(
    { ...summary, encrypted: isEncrypted(structure) },
    {
      version: STORED_BODY_VERSION,
      structure,
      content,
      wire: structureWire(structure),
      packed: packTexts(content),
      plainTextStart: fallback === null ? plainTextStart(raw, structure.root.bodyStart, texts.text, texts.html) : null,
    },
  );
};

/**
 * The new text and HTML of the message (src/mime/extract-*.ts). A parse that ran over its
 * time budget is redone in bounded mode (`timeout`): the extraction may be what ran over,
 * so that mode keeps the whole text and HTML.
 */
const extractedOf = (texts: { text: string; html: string | null }, fallback: ContentFallback | null): Pick<StoredContent, 'extractedText' | 'extractedHtml'> =>
  fallback === 'timeout'
    ? { extractedText: texts.text.trimEnd(), extractedHtml: texts.html }
    : { extractedText: extractReplyText(texts.text), extractedHtml: texts.html === null ? null : extractReplyHtml(texts.html) };

/** A parsed message from its header fields and its stored body, which holds its text, HTML and attachments. */
export const withStoredBody = (fields: Omit<ParsedMessage, 'text' | 'html' | 'attachments' | 'body'>, body: StoredBody): ParsedMessage => ({
  ...fields,
  text: body.content.text,
  html: body.content.html,
  attachments: body.content.attachments.map(({ filename, contentType, size }) => ({ filename, contentType, size })),
  body,
});

export const previewOf = (parsed: ParsedMessage): string => previewOfText(parsed.text ?? '');

/**
 * The text with its white space runs collapsed and trimmed, cut to PREVIEW_LENGTH; worked on a
 * head of the text that grows until it holds more than that, not on the whole text. A head's
 * collapsed form is a start of the whole's (a run cut at the head's end still collapses to
 * one space), so once it holds a character past PREVIEW_LENGTH the cut is the same.
 */
const previewOfText = (text: string): string => {
  for (let take = PREVIEW_LENGTH * 4; ; take *= 4) {
    const head = text.length <= take ? text : text.slice(0, take);
    const collapsed = head.replace(/\s+/g, ' ').trim();
    if (head === text || collapsed.length > PREVIEW_LENGTH) return collapsed.slice(0, PREVIEW_LENGTH);
  }
};

/** What the full-text index holds of a message: subject, the From/To/Cc names and addresses, the text. */
export const searchTextOf = (parsed: ParsedMessage): SearchText => ({
  subject: parsed.subject,
  participants: participantsOf(parsed),
  body: indexedText(parsed.text ?? ''),
});

export const participantsOf = (parsed: Pick<ParsedMessage, 'from' | 'to' | 'cc'>): string =>
  [parsed.from, ...parsed.to, ...parsed.cc]
    .filter((entry): entry is AddressEntry => entry !== null)
    .map((entry) => [entry.name, entry.email].filter(Boolean).join(' '))
    .join(' ');

const toList = (value: string | string[] | undefined): string[] =>
  value === undefined ? [] : Array.isArray(value) ? value : value.split(/\s+/).filter(Boolean);

const entriesOf = (value: AddressObject | AddressObject[] | undefined): AddressEntry[] => {
  const objects = value === undefined ? [] : Array.isArray(value) ? value : [value];
  const entries: AddressEntry[] = [];
  for (const object of objects) {
    for (const item of object.value) {
      // Group syntax (RFC 5322 section 3.4) nests its members.
      const members = item.group ?? [item];
      for (const member of members) {
        if (!member.address) continue;
        entries.push(member.name ? { name: member.name, email: member.address } : { email: member.address });
      }
    }
  }
  return entries;
};

const addressList = (value: AddressObject | AddressObject[] | undefined): AddressEntry[] => entriesOf(value);

const firstAddress = (value: AddressObject | undefined): AddressEntry | null => entriesOf(value)[0] ?? null;

/**
 * The Date header (RFC 5322 section 3.6.1), or null. mailparser substitutes the time of
 * parsing for a Date it cannot read; that is not the message's date, so it is dropped.
 */
const dateOf = (mail: ParsedMail): number | null => {
  const header = mail.headerLines.find((line) => line.key === 'date');
  if (!header || !mail.date) return null;
  const value = header.line
    .slice(header.line.indexOf(':') + 1)
    .replace(/\r?\n[ \t]/g, ' ')
    .trim();
  return Number.isNaN(new Date(value).getTime()) ? null : mail.date.getTime();
};

/** RFC 1847 multipart/encrypted and RFC 8551 S/MIME enveloped data. */
const isEncrypted = (structure: MessageStructure): boolean => {
  const { type, subtype } = structure.root;
  return (type === 'multipart' && subtype === 'encrypted') || (type === 'application' && /^(x-)?pkcs7-mime$/.test(subtype));
};
