import { domainOf } from '../../core/addresses.js';
import { filterInOrder } from '../../core/sequential.js';
import type { Clock } from '../../core/clock.js';
import { AppError, invalidInput } from '../../core/errors.js';
import type { Logger } from '../../core/logger.js';
import { isInvalidMailbox, type Handoff, type RecipientResult } from '../../core/outbound.js';
import { newUuid } from '../../core/ids.js';
import type { Store } from '../../store/index.js';
import type { RecipientRecord } from '../../store/submissions.js';
import type { NodeClaims } from '../cluster/claims.js';
import type { BounceService } from './bounces.js';
import type { DkimService } from './dkim.js';
import type { NextHopResolver } from './next-hop.js';
import type { SendingReputation } from './reputation.js';

export interface DeliveryConfig {
  /** 4xx answers are retried for this long from acceptance, then the recipient fails (48 h). */
  retryMs: number;
  /** SMTP transactions in flight at once. */
  concurrency: number;
  /** Due recipients taken up per run; each batch is claimed only when a lane is about to send it. */
  claimLimit: number;
}

export interface DeliveryReport {
  claimed: number;
  batches: number;
  delivered: number;
  deferred: number;
  failed: number;
  unresolved: number;
}

/** Waits after the 1st, 2nd, ... deferral; every later one waits 4 hours. */
const BACKOFF_MS = [1, 5, 15, 30, 60, 120].map((minutes) => minutes * 60_000);
const LATER_BACKOFF_MS = 4 * 60 * 60_000;
export const backoffAfter = (attempts: number): number => BACKOFF_MS[attempts - 1] ?? LATER_BACKOFF_MS;

/** Statuses the worker may settle: a recipient is never resent after delivered, failed or unresolved. */
const PENDING = ['queued', 'deferred'] as const;

interface Batch {
  submissionId: string;
  domain: string;
  recipients: RecipientRecord[];
}

/**
 * Hands queued recipients to the next server and records what it said (docs/operators/delivery.md).
 * A batch is claimed in a transaction just before its SMTP transaction, so it is never handed
 * over twice at once, and marked durably when the server answers DATA with 354, before the
 * message goes out: after a crash only a marked recipient can have been delivered. Each
 * batch's outcome is applied in one transaction: state, event, outbox entry, refund (once)
 * and suppression together.
 */
export class DeliveryService {
  constructor(
    private readonly store: Store,
    private readonly clock: Clock,
    private readonly logger: Logger,
    private readonly nextHops: NextHopResolver,
    private readonly handoff: Handoff,
    private readonly dkim: DkimService,
    private readonly bounces: BounceService,
    private readonly reputation: SendingReputation,
    private readonly config: DeliveryConfig,
    private readonly claims: NodeClaims,
  ) {}

  /**
   * Callers serialize runs (the worker does): a run's claims are all released before it returns.
   * A run first takes over the claims whose lease ran out (their node died or lost them).
   */
  async runOnce(now: Date = this.clock.now()): Promise<DeliveryReport> {
    const at = now.getTime();
    await this.takeOverClaims(at, null);
    const batches = await this.batchesOf(await this.store.delivery.dueIds(at, this.config.claimLimit));
    const report: DeliveryReport = { claimed: 0, batches: 0, delivered: 0, deferred: 0, failed: 0, unresolved: 0 };
    let next = 0;
    const recording: Promise<void>[] = [];
    const lane = async (): Promise<void> => {
      while (next < batches.length) {
        const batch = await this.claim(batches[next++], at);
        if (!batch) continue;
        report.claimed += batch.recipients.length;
        report.batches += 1;
        const results = await this.attempt(batch);
        // Not awaited: the lane starts its next transaction while outcomes queue up for one
        // shared commit, so a commit's fsync is paid per group of batches, not per batch.
        recording.push(
          this.apply(batch, results, at, report)
            .finally(() =>
              this.claims.release(
                'delivery',
                batch.recipients.map((row) => row.id),
              ),
            )
            .catch((error: unknown) => {
              // The outcome could not be recorded: the claim stays until its lease runs out, then
              // a run takes it over and settles the recipients by their DATA mark instead of
              // handing them over a second time.
              this.logger.error('recording a delivery outcome failed', {
                submission: batch.submissionId,
                error: error instanceof Error ? error.message : String(error),
              });
            }),
        );
      }
    };
    await Promise.all(Array.from({ length: Math.min(this.config.concurrency, batches.length) }, lane));
    await Promise.all(recording);
    return report;
  }

  /** When a run next has work: a deferred recipient's next attempt, or a claim's lease running out. */
  async nextDueAt(): Promise<number | null> {
    return await this.store.delivery.nextDueAt();
  }

  /**
   * At start: the claims this node's name held before (a process that stopped mid-handoff)
   * and those whose lease ran out; never a live node's (docs/design.md, "Several processes on
   * one store"). Returns how many became unresolved.
   */
  async recoverClaims(): Promise<number> {
    return await this.takeOverClaims(this.clock.now().getTime(), this.claims.nodeId);
  }

  /**
   * A claim taken over belongs to a handoff that was cut off. If the server had answered DATA,
   * the message may have gone out: the recipient becomes unresolved and keeps its credit (RFC
   * 5321 section 6.1). Otherwise nothing was handed over: the claim is dropped and the
   * recipient is due again as it was. Returns how many became unresolved.
   */
  private async takeOverClaims(at: number, ownNodeId: string | null): Promise<number> {
    const now = this.clock.now().getTime();
    const held = this.claims.heldIds('delivery');
    if ((await this.store.delivery.claimsToTakeOver(at, ownNodeId, held)).length === 0) return 0;
    return await this.store.transaction(async () => {
      let unresolved = 0;
      for (const { id, dataSent } of await this.store.delivery.claimsToTakeOver(at, ownNodeId, held)) {
        await this.store.delivery.unclaim(id);
        if (!dataSent) continue;
        const changed = await this.store.submissions.transition(
          id,
          {
            status: 'unresolved',
            nextAttemptAt: null,
            diagnostic: 'delivery was interrupted after the message data was sent; the outcome is unknown',
          },
          now,
          PENDING,
        );
        if (changed) unresolved += 1;
      }
      return unresolved;
    });
  }

  /** `agentpost outbound resolve <id> <delivered|failed>`: settles every unresolved recipient (failed refunds once). */
  async resolve(submissionId: string, outcome: string): Promise<{ resolved: number; refunded: number }> {
    if (outcome !== 'delivered' && outcome !== 'failed') throw invalidInput('outcome', 'outcome must be delivered or failed');
    const submission = await this.store.submissions.byId(submissionId);
    if (!submission) throw new AppError('not_found', `no submission ${submissionId}`);
    const now = this.clock.now().getTime();
    return await this.store.transaction(async () => {
      let resolved = 0;
      let refunded = 0;
      for (const id of await this.store.delivery.unresolvedOf(submissionId)) {
        const changed = await this.store.submissions.transition(id, { status: outcome, diagnostic: `settled by an operator as ${outcome}` }, now, [
          'unresolved',
        ]);
        if (!changed) continue;
        resolved += 1;
        if (outcome === 'failed' && (await this.store.submissions.refundOnce(id))) refunded += 1;
      }
      if (outcome === 'failed' && resolved > 0) await this.reputation.check(submission.accountId);
      return { resolved, refunded };
    });
  }

  /** One SMTP transaction per submission and domain; through a relay, per submission. */
  private async batchesOf(ids: number[]): Promise<Batch[]> {
    const batches = new Map<string, Batch>();
    for (const id of ids) {
      const row = await this.store.submissions.recipientById(id);
      if (!row) continue;
      const domain = this.nextHops.usesRelay ? '' : row.domain;
      const key = `${row.submissionId}\u0000${domain}`;
      const batch = batches.get(key) ?? { submissionId: row.submissionId, domain: row.domain, recipients: [] };
      batch.recipients.push(row);
      batches.set(key, batch);
    }
    return [...batches.values()];
  }

  /**
   * Claims the batch just before its transaction. Group commit: claims of lanes starting
   * together, outcomes and sends being accepted share one fsync. Null when none is left due.
   */
  private async claim(batch: Batch, at: number): Promise<Batch | null> {
    const ids = batch.recipients.map((row) => row.id);
    const claimed = new Set(await this.store.groupCommit(() => this.store.delivery.claim(ids, at, this.claims.nodeId, this.claims.leaseUntil())));
    this.claims.hold('delivery', claimed);
    const recipients = batch.recipients.filter((row) => claimed.has(row.id));
    return recipients.length === 0 ? null : { ...batch, recipients };
  }

  /**
   * Called when the server answered DATA: durable before the first byte of the message is sent.
   * A recipient this node no longer holds (its lease ran out, another node may be sending it)
   * stops the handoff here: the message is not sent (src/core/outbound.ts, beforeData).
   */
  private async markDataSent(batch: Batch, accepted: readonly string[]): Promise<void> {
    const addresses = new Set(accepted.map((address) => address.toLowerCase()));
    const ids = batch.recipients.filter((row) => addresses.has(row.address.toLowerCase())).map((row) => row.id);
    const at = this.clock.now().getTime();
    const marked = await this.store.groupCommit(() => this.store.delivery.markDataSent(ids, at, this.claims.nodeId));
    if (marked < ids.length) throw new Error('the claim was taken over after its lease ran out');
  }

  private async attempt(batch: Batch): Promise<RecipientResult[]> {
    const addresses = batch.recipients.map((row) => row.address);
    try {
      const submission = await this.store.submissions.byId(batch.submissionId);
      const raw = await this.store.submissions.rawOf(batch.submissionId);
      if (!submission || !raw) throw new Error('the submission is gone');
      const hop = await this.nextHops.resolve(batch.domain);
      if (!hop.ok) return addresses.map((recipient) => ({ recipient, status: hop.status, ...hop.answer }));
      const dkim = (await this.dkim.keyFor(domainOf(submission.fromAddress))) ?? undefined;
      return await this.handoff.deliver({
        route: hop.route,
        from: await this.bounces.envelopeSender(batch.recipients[0].id),
        recipients: addresses,
        raw,
        dkim,
        beforeData: (accepted) => this.markDataSent(batch, accepted),
      });
    } catch (error) {
      // Nothing was handed over (the handoff reports SMTP outcomes, it does not throw): retry later.
      this.logger.error('delivery attempt failed locally', { submission: batch.submissionId, error: error instanceof Error ? error.message : String(error) });
      return addresses.map((recipient) => ({
        recipient,
        status: 'deferred',
        smtpCode: 451,
        enhancedCode: '4.3.0',
        diagnostic: '451 4.3.0 local error before handoff',
      }));
    }
  }

  /** Group commit: batches finishing in the same turn (and sends being accepted) share one fsync. */
  private async apply(batch: Batch, results: RecipientResult[], at: number, report: DeliveryReport): Promise<void> {
    const byAddress = new Map(results.map((result) => [result.recipient.toLowerCase(), result]));
    // The job may run again alone if its group's transaction fails, so it only returns counts.
    const statuses = await this.store.groupCommit(async () => {
      // A recipient this node no longer holds was taken over after its lease ran out: the node
      // that took it settles it (docs/design.md, "Several processes on one store").
      const held = await filterInOrder(batch.recipients, (row) => this.store.delivery.release(row.id, this.claims.nodeId));
      const settled = await Promise.all(
        held.map(async (row) => {
          const result = byAddress.get(row.address.toLowerCase()) ?? {
            recipient: row.address,
            status: 'deferred',
            diagnostic: 'the next server gave no answer for this recipient',
          };
          return await this.settle(row, result, at);
        }),
      );
      if (settled.includes('failed')) await this.reputation.check(batch.recipients[0].accountId);
      return settled;
    });
    for (const status of statuses) report[status] += 1;
  }

  /** Records one recipient's outcome; returns the status it ended in. */
  private async settle(row: RecipientRecord, result: RecipientResult, at: number): Promise<'delivered' | 'deferred' | 'failed' | 'unresolved'> {
    const answer = { smtpCode: result.smtpCode, enhancedCode: result.enhancedCode, diagnostic: result.diagnostic };
    if (result.status === 'deferred') {
      const deadline = row.createdAt + this.config.retryMs;
      if (at < deadline) {
        const nextAttemptAt = Math.min(at + backoffAfter(row.attempts + 1), deadline);
        await this.store.submissions.transition(row.id, { status: 'deferred', ...answer, nextAttemptAt, countAttempt: true }, at, PENDING);
        return 'deferred';
      }
      const expired = `retries exhausted after ${Math.round(this.config.retryMs / 3_600_000)} h; last answer: ${result.diagnostic}`.slice(0, 500);
      await this.fail(row, { ...answer, diagnostic: expired }, at, false);
      return 'failed';
    }
    if (result.status === 'failed') {
      await this.fail(row, answer, at, isInvalidMailbox(result));
      return 'failed';
    }
    await this.store.submissions.transition(row.id, { status: result.status, ...answer, nextAttemptAt: null, countAttempt: true }, at, PENDING);
    return result.status;
  }

  /** Definite failure: refund the credit and release the access-key unit once; 5.1.1 suppresses. */
  private async fail(
    row: RecipientRecord,
    answer: { smtpCode?: number; enhancedCode?: string; diagnostic: string },
    at: number,
    suppress: boolean,
  ): Promise<void> {
    const changed = await this.store.submissions.transition(row.id, { status: 'failed', ...answer, nextAttemptAt: null, countAttempt: true }, at, PENDING);
    if (!changed) return;
    await this.store.submissions.refundOnce(row.id);
    if (suppress) {
      await this.store.suppressions.add({ id: newUuid(), accountId: row.accountId, address: row.address, reason: 'bounce', canRelease: true, createdAt: at });
    }
  }
}
