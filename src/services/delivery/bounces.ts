import { randomBytes } from 'node:crypto';
import { bounceAddress, isBounceShaped, verifyBounceAddress } from '../../core/bounce-token.js';
import type { Clock } from '../../core/clock.js';
import type { Logger } from '../../core/logger.js';
import { newUuid } from '../../core/ids.js';
import type { Store } from '../../store/index.js';
import type { RecipientRecord } from '../../store/submissions.js';
import { parseArf } from '../../mime/arf.js';
import { ComplaintIntake } from './complaints.js';
import { parseDsn, type Dsn, type DsnRecipient } from '../../mime/dsn.js';
import type { SendingReputation } from './reputation.js';

const SECRET_NAME = 'bounce-token-secret';

export interface BounceReport {
  /** False unless the message was an RFC 3464 DSN or a verified RFC 5965 complaint. */
  processed: boolean;
  bounced: string[];
  suppressed: string[];
  /** Addresses newly suppressed by a feedback-loop complaint. */
  complained: string[];
}

const notProcessed = (): BounceReport => ({ processed: false, bounced: [], suppressed: [], complained: [] });

/**
 * Signed bounce addresses and the DSNs and feedback-loop complaints that come back to them
 * (only verified ones are processed: docs/operators/delivery.md, Bounces). One SMTP transaction
 * carries one envelope sender for all the recipients of a submission on one domain, so the
 * token names one of those recipient rows: it proves the submission, and the DSN's
 * Final-Recipient (or the complaint's recipient, see complaints.ts) picks the one within it.
 */
export class BounceService {
  private secretCache: Buffer | null = null;
  private readonly complaints: ComplaintIntake;

  constructor(
    private readonly store: Store,
    private readonly clock: Clock,
    private readonly logger: Logger,
    private readonly reputation: SendingReputation,
    private readonly mailDomain: string,
  ) {
    this.complaints = new ComplaintIntake(store, clock, logger, reputation, async (address) => (await this.recipientOf(address))?.submissionId ?? null);
  }

  /** The envelope sender for mail of this recipient row: bounces+<token>@<mailDomain>. */
  async envelopeSender(recipientId: number): Promise<string> {
    return bounceAddress(await this.secret(), recipientId, this.mailDomain);
  }

  isBounceAddress(address: string): boolean {
    return isBounceShaped(address, this.mailDomain);
  }

  /** RCPT check: the token verifies and names a recipient we sent to. */
  async acceptsRecipient(address: string): Promise<boolean> {
    return (await this.recipientOf(address)) !== null;
  }

  /**
   * Mail to a signed bounce address: a DSN marks the matching recipients bounced (no
   * refund; 5.1.1 also suppresses); an RFC 5965 complaint suppresses its recipient.
   * Anything else, bounce-shaped or not, is accepted and dropped (docs/operators/delivery.md, Bounces).
   */
  async ingest(raw: Buffer, address: string): Promise<BounceReport> {
    const origin = await this.recipientOf(address);
    if (!origin) return notProcessed();
    const dsn = parseDsn(raw);
    if (dsn) return await this.ingestDsn(origin, dsn);
    const feedback = parseArf(raw);
    if (!feedback) return notProcessed();
    return { ...notProcessed(), ...(await this.complaints.ingest(origin, feedback)) };
  }

  private async ingestDsn(origin: RecipientRecord, dsn: Dsn): Promise<BounceReport> {
    const report: BounceReport = { ...notProcessed(), processed: true };
    const now = this.clock.now().getTime();
    await this.store.transaction(async () => {
      for (const entry of dsn.recipients) {
        // RFC 3464 section 2.3.3: only "failed" reports a message that will not be delivered
        // (a 4.x.x status with it means the remote server gave up retrying).
        if (entry.action !== 'failed') continue;
        const rowId = await this.store.delivery.recipientIdByAddress(origin.submissionId, entry.finalRecipient);
        if (rowId === null) continue;
        await this.applyBounce(rowId, origin.accountId, entry, now, report);
      }
      if (report.bounced.length > 0) await this.reputation.check(origin.accountId);
    });
    this.logger.info('bounce processed', { submission: origin.submissionId, bounced: report.bounced.length });
    return report;
  }

  private async applyBounce(rowId: number, accountId: string, entry: DsnRecipient, now: number, report: BounceReport): Promise<void> {
    const diagnostic = `DSN: ${entry.diagnostic ?? entry.status}`.slice(0, 500);
    const smtpCode = /^(?:smtp;\s*)?([45]\d\d)\b/i.exec(entry.diagnostic ?? '')?.[1];
    // A later bounce changes the outcome but never refunds (docs/agents/sending.md, Credits).
    const changed = await this.store.submissions.transition(
      rowId,
      {
        status: 'bounced',
        enhancedCode: entry.status,
        diagnostic,
        ...(smtpCode && { smtpCode: Number(smtpCode) }),
      },
      now,
      ['delivered', 'unresolved'],
    );
    if (!changed) return;
    report.bounced.push(entry.finalRecipient);
    if (entry.status !== '5.1.1') return;
    const added = await this.store.suppressions.add({
      id: newUuid(),
      accountId,
      address: entry.finalRecipient,
      reason: 'bounce',
      canRelease: true,
      createdAt: now,
    });
    if (added) report.suppressed.push(entry.finalRecipient);
  }

  private async recipientOf(address: string): Promise<RecipientRecord | null> {
    const id = verifyBounceAddress(await this.secret(), address, this.mailDomain);
    if (id === null || !/^\d+$/.test(id)) return null;
    return await this.store.submissions.recipientById(Number(id));
  }

  /** Generated once per installation and kept in the database (settings). */
  private async secret(): Promise<Buffer> {
    this.secretCache ??= await this.store.transaction(() => this.store.settings.getOrCreate(SECRET_NAME, () => randomBytes(32), this.clock.now().getTime()));
    return this.secretCache;
  }
}
