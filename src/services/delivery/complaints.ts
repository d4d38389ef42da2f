import type { Clock } from '../../core/clock.js';
import { someInOrder } from '../../core/sequential.js';
import { newUuid } from '../../core/ids.js';
import type { Logger } from '../../core/logger.js';
import type { RecipientStatus } from '../../core/types.js';
import type { Store } from '../../store/index.js';
import type { RecipientRecord, SubmissionRecord } from '../../store/submissions.js';
import { isComplaint, type FeedbackReport } from '../../mime/arf.js';
import type { SendingReputation } from './reputation.js';

export interface ComplaintOutcome {
  /** True when the report was a verified complaint about one recipient of ours. */
  processed: boolean;
  /** The address newly recorded as a complaint (empty for a duplicate). */
  complained: string[];
}

/** Only a recipient the message may have reached can complain about it. */
const REACHED: ReadonlySet<RecipientStatus> = new Set(['delivered', 'unresolved']);

const NOT_PROCESSED: ComplaintOutcome = { processed: false, complained: [] };

/**
 * Feedback-loop complaints (RFC 5965) that arrive at a signed bounce address. Suppressions
 * come only from verified complaints (docs/operators/delivery.md, Complaints), so a report counts
 * when (1) the envelope recipient's token verifies (checked at RCPT and again by the caller),
 * (2) the reported original is the submission that token names, and (3) it names exactly one
 * recipient of that submission. A complaint suppression cannot be released by the agent, so
 * a report we cannot attribute with certainty changes nothing.
 */
export class ComplaintIntake {
  constructor(
    private readonly store: Store,
    private readonly clock: Clock,
    private readonly logger: Logger,
    private readonly reputation: SendingReputation,
    /** The submission a signed bounce address names, or null when its token fails. */
    private readonly submissionOfBounceAddress: (address: string) => Promise<string | null>,
  ) {}

  /** `origin` is the recipient row the verified envelope token names. */
  async ingest(origin: RecipientRecord, report: FeedbackReport): Promise<ComplaintOutcome> {
    if (!isComplaint(report)) return NOT_PROCESSED;
    const submission = await this.store.submissions.byId(origin.submissionId);
    if (!submission || !(await this.isAbout(submission, report))) {
      this.logger.info('feedback report not processed: the original is not the submission its token names', { submission: origin.submissionId });
      return NOT_PROCESSED;
    }
    const complainant = complainantOf(report, await this.store.submissions.recipientsOf(submission.id));
    if (!complainant) {
      this.logger.info('feedback report not processed: it names no single recipient of the submission', { submission: submission.id });
      return NOT_PROCESSED;
    }
    // The delivery outcome stays as it is: the complaint proves the message was delivered.
    const recorded = await this.store.transaction(async () => {
      const changed = await this.record(submission.accountId, complainant.address);
      if (changed) await this.reputation.check(submission.accountId);
      return changed;
    });
    this.logger.info('complaint processed', { submission: submission.id, recorded });
    return { processed: true, complained: recorded ? [complainant.address] : [] };
  }

  /**
   * The original's Message-ID is the one we composed; without one (a header-only report
   * that left it out), its Return-Path or the report's Original-Mail-From must be a signed
   * bounce address of the same submission. A Message-ID that differs contradicts the token.
   */
  private async isAbout(submission: SubmissionRecord, report: FeedbackReport): Promise<boolean> {
    if (report.original.messageId !== null) return report.original.messageId === submission.messageId;
    const senders = [...report.original.returnPath, ...(report.originalMailFrom ? [report.originalMailFrom] : [])];
    return await someInOrder(senders, async (address) => (await this.submissionOfBounceAddress(address)) === submission.id);
  }

  /** Once per address and account; an active bounce or manual suppression becomes a complaint. */
  private async record(accountId: string, address: string): Promise<boolean> {
    const added = await this.store.suppressions.add({
      id: newUuid(),
      accountId,
      address,
      reason: 'complaint',
      canRelease: false,
      createdAt: this.clock.now().getTime(),
    });
    return added || (await this.store.suppressions.escalateToComplaint(accountId, address));
  }
}

/**
 * Which recipient complained, only when certain (a complaint cannot be undone by the agent):
 * 1. the report's Original-Rcpt-To (RFC 5965 section 3.2), when it gives any, names exactly
 *    one recipient the message reached;
 * 2. else the original's To and Cc name exactly one recipient it reached, and it reached no
 *    Bcc recipient (who could have complained without appearing there);
 * 3. else (a redacted report) the message reached exactly one recipient.
 * Anything else (several candidates, or a stranger) is nobody.
 */
export const complainantOf = (report: FeedbackReport, recipients: readonly RecipientRecord[]): RecipientRecord | null => {
  const reached = recipients.filter((recipient) => REACHED.has(recipient.status));
  const namedIn = (addresses: readonly string[]) => reached.filter((recipient) => addresses.includes(recipient.address));
  if (report.originalRcptTo.length > 0) return single(namedIn(report.originalRcptTo));
  const inHeader = single(namedIn(report.original.recipients));
  if (inHeader && !reached.some((recipient) => recipient.kind === 'bcc')) return inHeader;
  return single(reached);
};

const single = <T>(items: readonly T[]): T | null => (items.length === 1 ? items[0] : null);
