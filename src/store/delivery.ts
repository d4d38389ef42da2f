import { Repo } from './repo.js';

/** Bounce and complaint counts over an account's most recent charged recipients. */
export interface RecentOutcomes {
  recipients: number;
  bounces: number;
  complaints: number;
}

/**
 * The delivery worker's own queries over 002's recipient rows (migration 003 adds
 * claimed_at, 015 data_sent_at). State changes themselves go through SubmissionRepo.transition.
 */
export class DeliveryRepo extends Repo {
  /** Up to `limit` due recipients (queued, or deferred whose next attempt is due) that nobody holds, oldest first. */
  dueIds(now: number, limit: number): number[] {
    const rows = this.sql(
      `SELECT id FROM submission_recipients
       WHERE status IN ('queued', 'deferred') AND next_attempt_at <= ? AND claimed_at IS NULL
       ORDER BY next_attempt_at, id LIMIT ?`,
    ).all(now, limit) as { id: number }[];
    return rows.map((row) => row.id);
  }

  /**
   * When the queue is next due: the earliest unheld pending recipient's next attempt, or the
   * oldest claim's time (a claim is recovered once stale); null when nothing waits.
   */
  nextDueAt(staleClaimMs: number): number | null {
    const due = this.sql(
      `SELECT next_attempt_at FROM submission_recipients
       WHERE status IN ('queued', 'deferred') AND claimed_at IS NULL ORDER BY next_attempt_at LIMIT 1`,
    )
      .pluck()
      .get() as number | undefined;
    const claimed = this.sql('SELECT min(claimed_at) FROM submission_recipients WHERE claimed_at IS NOT NULL').pluck().get() as number | null;
    const times = [due ?? null, claimed === null ? null : claimed + staleClaimMs].filter((time): time is number => time !== null);
    return times.length === 0 ? null : Math.min(...times);
  }

  /**
   * Claims those of `ids` that are still pending and unheld; returns the ids claimed. Run in
   * a transaction: a claimed row is not due to anyone else until it is released.
   */
  claim(ids: readonly number[], now: number): number[] {
    const claim = this.sql(
      `UPDATE submission_recipients SET claimed_at = ?, data_sent_at = NULL
       WHERE id = ? AND claimed_at IS NULL AND status IN ('queued', 'deferred')`,
    );
    return ids.filter((id) => claim.run(now, id).changes === 1);
  }

  /** The next server answered DATA with 354 for these claimed recipients: the message goes out next. */
  markDataSent(ids: readonly number[], now: number): void {
    const mark = this.sql('UPDATE submission_recipients SET data_sent_at = ? WHERE id = ? AND claimed_at IS NOT NULL');
    for (const id of ids) mark.run(now, id);
  }

  unclaim(id: number): void {
    this.sql('UPDATE submission_recipients SET claimed_at = NULL, data_sent_at = NULL WHERE id = ?').run(id);
  }

  /** Claims taken at or before `before` (left behind by a process that stopped mid-handoff), and whether DATA was reached. */
  claimedBefore(before: number): { id: number; dataSent: boolean }[] {
    const rows = this.sql(
      `SELECT id, data_sent_at IS NOT NULL AS data_sent FROM submission_recipients
       WHERE claimed_at IS NOT NULL AND claimed_at <= ? ORDER BY id`,
    ).all(before) as { id: number; data_sent: number }[];
    return rows.map((row) => ({ id: row.id, dataSent: row.data_sent === 1 }));
  }

  /** The recipient of a submission with this address, if any. */
  recipientIdByAddress(submissionId: string, address: string): number | null {
    const row = this.sql('SELECT id FROM submission_recipients WHERE submission_id = ? AND address = ?').get(submissionId, address) as
      | { id: number }
      | undefined;
    return row ? row.id : null;
  }

  unresolvedOf(submissionId: string): number[] {
    const rows = this.sql(`SELECT id FROM submission_recipients WHERE submission_id = ? AND status = 'unresolved' ORDER BY id`).all(submissionId) as {
      id: number;
    }[];
    return rows.map((row) => row.id);
  }

  /**
   * Over the account's last `window` charged recipients: how many failed or bounced, and how
   * many went to an address the account has an active complaint suppression for.
   */
  recentOutcomes(accountId: string, window: number): RecentOutcomes {
    return this.sql(
      `SELECT count(*) AS recipients,
         coalesce(sum(r.status IN ('failed', 'bounced')), 0) AS bounces,
         coalesce(sum(EXISTS (SELECT 1 FROM suppressions s WHERE s.account_id = r.account_id AND s.address = r.address
           AND s.reason = 'complaint' AND s.released_at IS NULL)), 0) AS complaints
       FROM (SELECT account_id, address, status FROM submission_recipients
             WHERE account_id = ? AND credit_reserved = 1 ORDER BY id DESC LIMIT ?) r`,
    ).get(accountId, window) as RecentOutcomes;
  }
}
