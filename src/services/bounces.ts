import { randomBytes } from 'node:crypto';
import { bounceAddress, isBounceShaped, verifyBounceAddress } from '../core/bounce-token.js';
import type { Clock } from '../core/clock.js';
import type { Logger } from '../core/logger.js';
import { newUuid } from '../core/ids.js';
import type { Store } from '../store/index.js';
import { parseDsn, type DsnRecipient } from './dsn.js';
import type { SendingReputation } from './reputation.js';

const SECRET_NAME = 'bounce-token-secret';

export interface BounceReport {
  /** False when the message was not an RFC 3464 DSN (not processed). */
  processed: boolean;
  bounced: string[];
  suppressed: string[];
}

/**
 * Signed bounce addresses and the DSNs that come back to them (contract: only verified
 * bounces are processed). One SMTP transaction carries one envelope sender for all the
 * recipients of a submission on one domain, so the token names one of those recipient rows:
 * it proves the submission, and the DSN's Final-Recipient picks the recipient within it.
 */
export class BounceService {
  private secretCache: Buffer | null = null;

  constructor(
    private readonly store: Store,
    private readonly clock: Clock,
    private readonly logger: Logger,
    private readonly reputation: SendingReputation,
    private readonly mailDomain: string,
  ) {}

  /** The envelope sender for mail of this recipient row: bounces+<token>@<mailDomain>. */
  envelopeSender(recipientId: number): string {
    return bounceAddress(this.secret(), recipientId, this.mailDomain);
  }

  isBounceAddress(address: string): boolean {
    return isBounceShaped(address, this.mailDomain);
  }

  /** RCPT check: the token verifies and names a recipient we sent to. */
  acceptsRecipient(address: string): boolean {
    return this.recipientOf(address) !== null;
  }

  /** A DSN marks the matching recipients bounced (no refund); 5.1.1 also suppresses. */
  ingest(raw: Buffer, address: string): BounceReport {
    const report: BounceReport = { processed: false, bounced: [], suppressed: [] };
    const origin = this.recipientOf(address);
    const dsn = parseDsn(raw);
    if (!origin || !dsn) return report;
    report.processed = true;
    const now = this.clock.now().getTime();
    this.store.transaction(() => {
      for (const entry of dsn.recipients) {
        // RFC 3464 section 2.3.3: only "failed" reports a message that will not be delivered
        // (a 4.x.x status with it means the remote server gave up retrying).
        if (entry.action !== 'failed') continue;
        const rowId = this.store.delivery.recipientIdByAddress(origin.submissionId, entry.finalRecipient);
        if (rowId === null) continue;
        this.applyBounce(rowId, origin.accountId, entry, now, report);
      }
      if (report.bounced.length > 0) this.reputation.check(origin.accountId);
    });
    this.logger.info('bounce processed', { submission: origin.submissionId, bounced: report.bounced.length });
    return report;
  }

  private applyBounce(rowId: number, accountId: string, entry: DsnRecipient, now: number, report: BounceReport): void {
    const diagnostic = `DSN: ${entry.diagnostic ?? entry.status}`.slice(0, 500);
    const smtpCode = /^(?:smtp;\s*)?([45]\d\d)\b/i.exec(entry.diagnostic ?? '')?.[1];
    // A later bounce changes the outcome but never refunds (contract: States and transitions).
    const changed = this.store.submissions.transition(rowId, {
      status: 'bounced', enhancedCode: entry.status, diagnostic, ...(smtpCode && { smtpCode: Number(smtpCode) }),
    }, now, ['delivered', 'unresolved']);
    if (!changed) return;
    report.bounced.push(entry.finalRecipient);
    if (entry.status !== '5.1.1') return;
    const added = this.store.suppressions.add({
      id: newUuid(), accountId, address: entry.finalRecipient, reason: 'bounce', canRelease: true, createdAt: now,
    });
    if (added) report.suppressed.push(entry.finalRecipient);
  }

  private recipientOf(address: string): { submissionId: string; accountId: string } | null {
    const id = verifyBounceAddress(this.secret(), address, this.mailDomain);
    if (id === null || !/^\d+$/.test(id)) return null;
    const row = this.store.submissions.recipientById(Number(id));
    return row ? { submissionId: row.submissionId, accountId: row.accountId } : null;
  }

  /** Generated once per installation and kept in the database (settings). */
  private secret(): Buffer {
    this.secretCache ??= this.store.transaction(() =>
      this.store.settings.getOrCreate(SECRET_NAME, () => randomBytes(32), this.clock.now().getTime()));
    return this.secretCache;
  }
}
