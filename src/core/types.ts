/** Records shared by the store and the services. Times are Unix milliseconds. */

export type SendingState = 'probation' | 'standard' | 'reviewed' | 'paused';
export type AccountStatus = 'active' | 'suspended';

export interface Account {
  id: string;
  agentId: string;
  name: string | null;
  email: string;
  credits: number;
  status: AccountStatus;
  sendingState: SendingState;
  createdAt: number;
}

export type Permission = 'mail:read' | 'mail:send' | 'domains:read' | 'domains:write';

/** Who is calling: resolved from a Bearer key by the keys service. */
export interface Principal {
  accountId: string;
  keyId: string;
  kind: 'full' | 'access';
  /** A full key holds every permission; a limited key only those it was issued with. */
  permissions: readonly Permission[];
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

/** Outcome of one recipient of an outgoing submission (DESIGN.md; states in migration 002). */
export type RecipientStatus = 'queued' | 'deferred' | 'delivered' | 'bounced' | 'failed' | 'unresolved' | 'suppressed';
export type RecipientKind = 'to' | 'cc' | 'bcc';
export type SubmissionVia = 'rest' | 'mcp' | 'smtp';
export type SuppressionReason = 'bounce' | 'complaint' | 'manual';
