import type { AuthenticationVerdict } from './authentication.js';
import type { JunkVerdict } from './junk.js';
/** Records shared by the store and the services. Times are Unix milliseconds. */

export type SendingState = 'probation' | 'standard' | 'reviewed' | 'paused';
export type AccountStatus = 'active' | 'suspended';
/** docs/design.md "Owners": an agent registers over REST/MCP; a human signs in to the console. */
export type AccountKind = 'agent' | 'human';

export interface Account {
  id: string;
  agentId: string;
  name: string | null;
  email: string;
  credits: number;
  status: AccountStatus;
  sendingState: SendingState;
  createdAt: number;
  kind: AccountKind;
  /** The human account that owns this agent; null when unowned (and always for a human). */
  ownerId: string | null;
}

/** `mail:draft` is exclusive: a key that has it has nothing else (docs/agents/drafts.md). */
export type Permission = 'mail:read' | 'mail:send' | 'mail:junk' | 'mail:draft' | 'domains:read' | 'domains:write';

/**
 * Who is calling: resolved from a Bearer key by the keys service, or, kind `owner`, a
 * signed-in human acting on an account it may see (its own, or an agent it owns); the
 * owners service builds those only after checking ownership. For an owner principal
 * `keyId` is `owner:<the human's account id>`, which is what submissions record as sender.
 */
export interface Principal {
  accountId: string;
  keyId: string;
  kind: 'full' | 'access' | 'owner';
  /** A full key holds every permission; a limited key only those it was issued with. */
  permissions: readonly Permission[];
  /** Kind `owner` only: the signed-in human acting (its own 2FA guards what it does). */
  ownerId?: string;
  /** A sandbox access key: sends are validated, charged to nobody and never leave the host. */
  sandbox?: boolean;
}

export interface Folder {
  id: number;
  mailboxId: string;
  name: string;
  uidValidity: number;
  uidNext: number;
  messageCount: number;
  /** RFC 7162 HIGHESTMODSEQ: raised by every change in the folder (a message stored, its flags, an expunge). */
  highestModseq: number;
}

export interface AddressEntry {
  name?: string;
  email: string;
}

/** The parsed fields of a stored message that listing needs (no body, no raw). */
export interface MessageSummary {
  rowId: number;
  uid: number;
  messageId: string | null;
  subject: string;
  from: AddressEntry | null;
  to: AddressEntry[];
  cc: AddressEntry[];
  date: number | null;
  preview: string;
  size: number;
  attachments: AttachmentMeta[];
  /** True for S/MIME or PGP/MIME encrypted bodies (RFC 1847, RFC 8551). */
  encrypted: boolean;
  seen: boolean;
  flagged: boolean;
  /** The conversation it belongs to (src/services/mail/threads.ts); null only until the thread backfill reaches it. */
  threadId: number | null;
  /** The verdict on a received message; null for Sent copies and mail stored before it was recorded. */
  authentication: AuthenticationVerdict | null;
  /** The junk filter's verdict on a received message; null for mail it did not judge. */
  junk: JunkVerdict | null;
  /** IMAP keywords (RFC 3501 section 2.3.2); $Junk and $NotJunk record the mailbox's judgment. */
  keywords: string[];
}

/** IMAP's flags of a message (RFC 3501 section 2.3.2); keywords are atoms, kept as given. */
export interface MessageFlags {
  seen: boolean;
  answered: boolean;
  flagged: boolean;
  deleted: boolean;
  draft: boolean;
  keywords: string[];
}

export const NO_FLAGS: MessageFlags = { seen: false, answered: false, flagged: false, deleted: false, draft: false, keywords: [] };

export interface AttachmentMeta {
  filename: string | null;
  contentType: string;
  size: number;
}

/** Outcome of one recipient of an outgoing submission (docs/design.md; states in migration 002). */
export type RecipientStatus = 'queued' | 'deferred' | 'delivered' | 'bounced' | 'failed' | 'unresolved' | 'suppressed';
export type RecipientKind = 'to' | 'cc' | 'bcc';
export type SubmissionVia = 'rest' | 'mcp' | 'smtp';
export type SuppressionReason = 'bounce' | 'complaint' | 'manual';
