import type { AuthenticationResults, AuthenticationVerdict, Trust } from '../../core/authentication.js';
import { isJunkNow, type JunkVerdict } from '../../core/junk.js';
import type { AddressEntry, Folder, MessageSummary } from '../../core/types.js';
import type { ContentFallback, StoredContent } from '../../core/stored-message.js';
import type { TlsSessionInfo } from '../../core/tls.js';
import type { Arrival } from '../../store/message-arrivals.js';
import type { FullSummary } from '../../store/messages.js';

/**
 * The Message shape (schema/message.json), shared by REST and MCP so both return the same JSON.
 * Every value is data taken from the message; nothing here renders it.
 */
export interface MessageView {
  id: string;
  messageId?: string;
  subject: string;
  from?: AddressEntry;
  to: AddressEntry[];
  cc: AddressEntry[];
  date?: string;
  preview: string;
  isRead: boolean;
  isStarred: boolean;
  encryptedBody: boolean;
  /** Received mail only: the verdict at arrival (core/authentication.ts). */
  trust?: Trust;
  authentication?: AuthenticationResults & { reason: string };
  /** Whether it counts as junk: the mailbox's judgment ($Junk / $NotJunk) when there is one, else the filter's verdict (core/junk.ts). */
  isJunk: boolean;
  /** Received mail only: the junk filter's verdict at arrival. */
  junkVerdict?: JunkVerdict;
  attachments: AttachmentView[];
  /** The conversation (GET /api/v1/agent/threads/{threadId}). */
  threadId?: string;
}

export interface AttachmentView {
  filename?: string;
  name?: string;
  contentType: string;
  size: number;
  content?: string;
  encoding?: 'base64';
}

export interface FullMessageView extends MessageView {
  isAnswered: boolean;
  isDeleted: boolean;
  isDraft: boolean;
  keywords: string[];
  folder: string;
  uidValidity: string;
  body: string;
  text: string;
  html: string | null;
  inReplyTo: string | null;
  references: string[];
  /** The new text and HTML: without quoted history and signature (computed at ingest, src/mime/extract-*.ts). */
  extractedText: string;
  extractedHtml: string | null;
  /** Present when `text` and `html` came from the bounded fallback instead of the full parse, and why. */
  contentFallback?: ContentFallback;
  /** True or false for mail that reached this service's MX; null for mail stored another way. */
  receivedOverTls: boolean | null;
  /** The TLS version and cipher suite of that SMTP session, when it was encrypted. */
  tls: TlsSessionInfo | null;
}

export const messageView = (message: MessageSummary): MessageView => ({
  id: String(message.uid),
  ...(message.messageId ? { messageId: message.messageId } : {}),
  subject: message.subject,
  ...(message.from ? { from: message.from } : {}),
  to: message.to,
  cc: message.cc,
  ...(message.date !== null ? { date: new Date(message.date).toISOString() } : {}),
  preview: message.preview,
  isRead: message.seen,
  isStarred: message.flagged,
  encryptedBody: message.encrypted,
  ...authenticationView(message.authentication),
  isJunk: isJunkNow(message.keywords, message.junk),
  ...(message.junk ? { junkVerdict: message.junk } : {}),
  attachments: message.attachments.map((attachment) => ({
    ...(attachment.filename !== null ? { filename: attachment.filename, name: attachment.filename } : {}),
    contentType: attachment.contentType,
    size: attachment.size,
  })),
  ...(message.threadId !== null ? { threadId: String(message.threadId) } : {}),
});

const authenticationView = (verdict: AuthenticationVerdict | null): Pick<MessageView, 'trust' | 'authentication'> => {
  if (!verdict) return {};
  const { trust, spf, dkim, dmarc, arc, reason } = verdict;
  return { trust, authentication: { spf, dkim, dmarc, arc, reason } };
};

/** The full read answer, from the stored content; `contents` are the attachments' decoded bytes, in order. */
export const fullMessageView = (
  message: FullSummary,
  content: StoredContent,
  contents: Buffer[],
  folder: Folder,
  arrival: Arrival | null,
): FullMessageView => ({
  ...messageView(message),
  // The IMAP flags beside isRead (\Seen) and isStarred (\Flagged).
  isAnswered: message.answered,
  isDeleted: message.deleted,
  isDraft: message.draft,
  keywords: message.keywords,
  attachments: content.attachments.map((attachment, index) => ({
    ...(attachment.filename !== null ? { filename: attachment.filename, name: attachment.filename } : {}),
    contentType: attachment.contentType,
    size: attachment.size,
    content: contents[index].toString('base64'),
    encoding: 'base64',
  })),
  folder: folder.name,
  uidValidity: String(folder.uidValidity),
  body: content.text,
  text: content.text,
  html: content.html,
  inReplyTo: message.inReplyTo,
  references: content.references,
  extractedText: content.extractedText,
  extractedHtml: content.extractedHtml,
  ...(content.fallback ? { contentFallback: content.fallback } : {}),
  receivedOverTls: arrival ? arrival.tls !== null : null,
  tls: arrival?.tls ?? null,
});
