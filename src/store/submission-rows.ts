import type { RecipientKind, RecipientStatus, SubmissionVia } from '../core/types.js';

/**
 * The rows of submissions and their recipients as the store reads and writes them
 * (src/store/submissions.ts): the records, the columns read and the integer flags made booleans.
 */
export interface NewSubmission {
  id: string;
  accountId: string;
  keyId: string;
  messageId: string;
  contentHash: string;
  fromAddress: string;
  subject: string;
  via: SubmissionVia;
  createdAt: number;
  raw: Buffer;
}

export interface SubmissionRecord extends Omit<NewSubmission, 'raw'> {
  seq: number;
  sentCopySaved: boolean;
}

export interface NewRecipient {
  address: string;
  domain: string;
  kind: RecipientKind;
  /** `queued` (a credit is reserved) or `suppressed` (nothing is reserved). */
  status: 'queued' | 'suppressed';
  /** A sandbox send (src/services/sending/sandbox.ts): queued, but nothing is reserved and nothing is due. */
  sandbox?: boolean;
}

export interface RecipientRecord {
  id: number;
  submissionId: string;
  accountId: string;
  keyId: string;
  address: string;
  domain: string;
  kind: RecipientKind;
  status: RecipientStatus;
  creditReserved: boolean;
  refunded: boolean;
  attempts: number;
  nextAttemptAt: number | null;
  lastSmtpCode: number | null;
  lastEnhancedCode: string | null;
  lastDiagnostic: string | null;
  createdAt: number;
  updatedAt: number;
}

export interface RecipientEvent {
  id: number;
  recipientId: number;
  address: string;
  status: RecipientStatus;
  smtpCode: number | null;
  enhancedCode: string | null;
  diagnostic: string | null;
  at: number;
}

/** One state change of a recipient, as the delivery worker or local delivery reports it. */
export interface RecipientChange {
  status: RecipientStatus;
  smtpCode?: number;
  enhancedCode?: string;
  diagnostic?: string;
  /** When to try again (deferred); null clears it. Unchanged when undefined. */
  nextAttemptAt?: number | null;
  /** Count this change as one delivery attempt. */
  countAttempt?: boolean;
  /** Feedback about a delivered message: the recipient reported it as spam. */
  feedback?: 'complaint';
}

export const SUBMISSION_COLUMNS = `seq, id, account_id AS accountId, key_id AS keyId, message_id AS messageId,
  content_hash AS contentHash, from_address AS fromAddress, subject, via, sent_copy_saved AS sentCopySaved,
  created_at AS createdAt`;

export const RECIPIENT_COLUMNS = `id, submission_id AS submissionId, account_id AS accountId, key_id AS keyId, address, domain,
  kind, status, credit_reserved AS creditReserved, refunded, attempts, next_attempt_at AS nextAttemptAt,
  last_smtp_code AS lastSmtpCode, last_enhanced_code AS lastEnhancedCode, last_diagnostic AS lastDiagnostic,
  created_at AS createdAt, updated_at AS updatedAt`;

export type Flagged<T, K extends keyof T> = Omit<T, K> & { [P in K]: number };

export const toSubmission = (row: Flagged<SubmissionRecord, 'sentCopySaved'>): SubmissionRecord => ({
  ...row,
  sentCopySaved: row.sentCopySaved === 1,
});

export const toRecipient = (row: Flagged<RecipientRecord, 'creditReserved' | 'refunded'>): RecipientRecord => ({
  ...row,
  creditReserved: row.creditReserved === 1,
  refunded: row.refunded === 1,
});
