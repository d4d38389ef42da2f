import { OUTBOUND_RECIPIENT_UPDATED, type OutboundRecipientUpdatedEvent } from '../core/events.js';
import type { RecipientStatus } from '../core/types.js';
import type { Db } from './db.js';
import type { ChangeRecorder } from './outbox.js';
import type { RecipientCountRepo } from './recipient-counts.js';
import { Repo } from './repo.js';
import {
  type Flagged,
  type NewRecipient,
  type NewSubmission,
  RECIPIENT_COLUMNS,
  type RecipientChange,
  type RecipientEvent,
  type RecipientRecord,
  SUBMISSION_COLUMNS,
  type SubmissionRecord,
  toRecipient,
  toSubmission,
} from './submission-rows.js';

export type { NewRecipient, NewSubmission, RecipientChange, RecipientEvent, RecipientRecord, SubmissionRecord } from './submission-rows.js';

/**
 * Submissions, their recipients and the history of recipient outcomes. Every state change
 * (including acceptance) also writes the outbox topic `outbound.recipient_updated` in the
 * same transaction (docs/design.md rule 6), so callers cannot forget it.
 */
export class SubmissionRepo extends Repo {
  constructor(
    db: Db,
    private readonly changes: ChangeRecorder,
    private readonly counts: RecipientCountRepo,
  ) {
    super(db);
  }

  /**
   * Inserts the submission and one row per recipient, each with its first event, and counts
   * the charged ones for the sending limits on the day that starts at `dayStart`.
   */
  insert(submission: NewSubmission, recipients: readonly NewRecipient[], dayStart: number): RecipientRecord[] {
    this.sql(
      `INSERT INTO submissions (id, account_id, key_id, message_id, content_hash, from_address, subject, via, created_at, raw)
       VALUES (@id, @accountId, @keyId, @messageId, @contentHash, @fromAddress, @subject, @via, @createdAt, @raw)`,
    ).run(submission);
    const at = submission.createdAt;
    const records = recipients.map((recipient) => {
      const row = this.sql(
        `INSERT INTO submission_recipients (submission_id, account_id, key_id, address, domain, kind, status,
           credit_reserved, next_attempt_at, created_at, updated_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?) RETURNING ${RECIPIENT_COLUMNS}`,
      ).get(
        submission.id,
        submission.accountId,
        submission.keyId,
        recipient.address,
        recipient.domain,
        recipient.kind,
        recipient.status,
        recipient.status === 'queued' && !recipient.sandbox ? 1 : 0,
        recipient.status === 'queued' && !recipient.sandbox ? at : null,
        at,
        at,
      ) as Flagged<RecipientRecord, 'creditReserved' | 'refunded'>;
      const record = toRecipient(row);
      this.recordEvent(record, { status: record.status }, at);
      return record;
    });
    this.counts.add(submission.accountId, at, dayStart, records.filter((record) => record.creditReserved).length);
    return records;
  }

  setSentCopySaved(id: string): void {
    this.sql('UPDATE submissions SET sent_copy_saved = 1 WHERE id = ?').run(id);
  }

  byId(id: string): SubmissionRecord | null {
    const row = this.sql(`SELECT ${SUBMISSION_COLUMNS} FROM submissions WHERE id = ?`).get(id) as Flagged<SubmissionRecord, 'sentCopySaved'> | undefined;
    return row ? toSubmission(row) : null;
  }

  /** The composed RFC 5322 message, exactly the bytes to hand to the next server. */
  rawOf(id: string): Buffer | null {
    const row = this.sql('SELECT raw FROM submissions WHERE id = ?').get(id) as { raw: Buffer } | undefined;
    return row ? row.raw : null;
  }

  /**
   * Newest first, `limit` rows with seq < `beforeSeq`. With `keyId`, only that key's
   * submissions (a limited key reads only its own receipts).
   */
  page(accountId: string, options: { keyId?: string; beforeSeq?: number; limit: number }): SubmissionRecord[] {
    const before = options.beforeSeq ?? Number.MAX_SAFE_INTEGER;
    const rows =
      options.keyId === undefined
        ? this.sql(`SELECT ${SUBMISSION_COLUMNS} FROM submissions WHERE account_id = ? AND seq < ? ORDER BY seq DESC LIMIT ?`).all(
            accountId,
            before,
            options.limit,
          )
        : this.sql(`SELECT ${SUBMISSION_COLUMNS} FROM submissions WHERE key_id = ? AND account_id = ? AND seq < ? ORDER BY seq DESC LIMIT ?`).all(
            options.keyId,
            accountId,
            before,
            options.limit,
          );
    return (rows as Flagged<SubmissionRecord, 'sentCopySaved'>[]).map(toSubmission);
  }

  recipientsOf(submissionId: string): RecipientRecord[] {
    const rows = this.sql(`SELECT ${RECIPIENT_COLUMNS} FROM submission_recipients WHERE submission_id = ? ORDER BY id`).all(submissionId) as Flagged<
      RecipientRecord,
      'creditReserved' | 'refunded'
    >[];
    return rows.map(toRecipient);
  }

  recipientById(id: number): RecipientRecord | null {
    const row = this.sql(`SELECT ${RECIPIENT_COLUMNS} FROM submission_recipients WHERE id = ?`).get(id) as
      | Flagged<RecipientRecord, 'creditReserved' | 'refunded'>
      | undefined;
    return row ? toRecipient(row) : null;
  }

  /** The latest `limit` state changes of a submission, oldest of them first. */
  eventsOf(submissionId: string, limit = 200): RecipientEvent[] {
    return this.sql(
      `SELECT * FROM (
         SELECT e.id, e.recipient_id AS recipientId, r.address, e.status, e.smtp_code AS smtpCode,
           e.enhanced_code AS enhancedCode, e.diagnostic, e.at
         FROM recipient_events e JOIN submission_recipients r ON r.id = e.recipient_id
         WHERE e.submission_id = ? ORDER BY e.id DESC LIMIT ?
       ) ORDER BY id`,
    ).all(submissionId, limit) as RecipientEvent[];
  }

  /**
   * Moves a recipient to a new state, records the event and writes the outbox entry.
   * With `onlyFrom`, changes nothing unless the current state is one of them (so two
   * workers cannot both settle one recipient). Returns whether the row changed.
   */
  transition(recipientId: number, change: RecipientChange, now: number, onlyFrom?: readonly RecipientStatus[]): boolean {
    const guard = onlyFrom ? `AND status IN (${onlyFrom.map(() => '?').join(', ')})` : '';
    const row = this.sql(
      `UPDATE submission_recipients SET status = ?, last_smtp_code = ?, last_enhanced_code = ?, last_diagnostic = ?,
         next_attempt_at = CASE WHEN ? THEN ? ELSE next_attempt_at END, attempts = attempts + ?, updated_at = ?
       WHERE id = ? ${guard} RETURNING ${RECIPIENT_COLUMNS}`,
    ).get(
      change.status,
      change.smtpCode ?? null,
      change.enhancedCode ?? null,
      change.diagnostic ?? null,
      change.nextAttemptAt === undefined ? 0 : 1,
      change.nextAttemptAt ?? null,
      change.countAttempt ? 1 : 0,
      now,
      recipientId,
      ...(onlyFrom ?? []),
    ) as Flagged<RecipientRecord, 'creditReserved' | 'refunded'> | undefined;
    if (!row) return false;
    this.recordEvent(toRecipient(row), change, now);
    return true;
  }

  /**
   * Gives a recipient's credit back at most once (a definite rejection refunds once:
   * docs/agents/sending.md, Credits). The flag flips only while it is 0, and the credit is added
   * only when it did, in one transaction. Returns whether a credit was refunded now.
   */
  refundOnce(recipientId: number): boolean {
    const work = this.db.transaction((): boolean => {
      const row = this.sql(
        `UPDATE submission_recipients SET refunded = 1
         WHERE id = ? AND refunded = 0 AND credit_reserved = 1 RETURNING account_id AS accountId`,
      ).get(recipientId) as { accountId: string } | undefined;
      if (!row) return false;
      this.sql('UPDATE accounts SET credits = credits + 1 WHERE id = ?').run(row.accountId);
      return true;
    });
    return this.db.inTransaction ? work() : work.immediate();
  }

  /** Recipients waiting for the delivery worker whose next attempt is due, oldest first. */
  due(now: number, limit: number): RecipientRecord[] {
    const rows = this.sql(
      `SELECT ${RECIPIENT_COLUMNS} FROM submission_recipients
       WHERE status IN ('queued', 'deferred') AND next_attempt_at <= ? ORDER BY next_attempt_at, id LIMIT ?`,
    ).all(now, limit) as Flagged<RecipientRecord, 'creditReserved' | 'refunded'>[];
    return rows.map(toRecipient);
  }

  /** True when an identical earlier message of the account has an unresolved recipient. */
  hasUnresolvedIdentical(accountId: string, contentHash: string): boolean {
    return (
      this.sql(
        `SELECT 1 FROM submissions s JOIN submission_recipients r ON r.submission_id = s.id
       WHERE s.account_id = ? AND s.content_hash = ? AND r.status = 'unresolved' LIMIT 1`,
      ).get(accountId, contentHash) !== undefined
    );
  }

  /** Charged recipients of the account since `since` (sending limits count these). */
  countAccountRecipientsSince(accountId: string, since: number): number {
    return (
      this.sql('SELECT count(*) AS n FROM submission_recipients WHERE account_id = ? AND created_at >= ? AND credit_reserved = 1').get(accountId, since) as {
        n: number;
      }
    ).n;
  }

  /** The creation time of the charged recipient at 0-based position `index` since `since`, oldest first. */
  recipientTimeAt(accountId: string, since: number, index: number): number | null {
    const at = this.sql(
      `SELECT created_at FROM submission_recipients
       WHERE account_id = ? AND created_at >= ? AND credit_reserved = 1 ORDER BY created_at LIMIT 1 OFFSET ?`,
    )
      .pluck()
      .get(accountId, since, index) as number | undefined;
    return at ?? null;
  }

  /** Budget units a key holds since `since` (0 for all time): charged and not refunded. */
  countKeyUnitsSince(keyId: string, since: number): number {
    return (
      this.sql(
        `SELECT count(*) AS n FROM submission_recipients
       WHERE key_id = ? AND created_at >= ? AND credit_reserved = 1 AND refunded = 0`,
      ).get(keyId, since) as { n: number }
    ).n;
  }

  private recordEvent(recipient: RecipientRecord, change: Omit<RecipientChange, 'nextAttemptAt' | 'countAttempt'>, at: number): void {
    this.sql(
      `INSERT INTO recipient_events (recipient_id, submission_id, status, smtp_code, enhanced_code, diagnostic, at)
       VALUES (?, ?, ?, ?, ?, ?, ?)`,
    ).run(recipient.id, recipient.submissionId, change.status, change.smtpCode ?? null, change.enhancedCode ?? null, change.diagnostic ?? null, at);
    const event: OutboundRecipientUpdatedEvent = {
      accountId: recipient.accountId,
      submissionId: recipient.submissionId,
      recipient: recipient.address,
      status: change.status,
      at,
      ...(change.smtpCode !== undefined && { smtpCode: change.smtpCode }),
      ...(change.enhancedCode !== undefined && { enhancedCode: change.enhancedCode }),
      ...(change.diagnostic !== undefined && { diagnostic: change.diagnostic }),
      ...(change.feedback !== undefined && { feedback: change.feedback }),
    };
    this.changes.record(OUTBOUND_RECIPIENT_UPDATED, event);
  }
}
