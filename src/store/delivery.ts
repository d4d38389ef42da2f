import { Repo } from './repo.js';

/** Bounce and complaint counts over an account's most recent charged recipients. */
export interface RecentOutcomes {
  recipients: number;
  bounces: number;
  complaints: number;
}

/**
 * The delivery worker's own queries over 002's recipient rows (migration 003 adds
 * claimed_at, 015 data_sent_at, 085 claimed_by and lease_until). State changes themselves go through SubmissionRepo.transition.
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
   * earliest lease to run out (its claim is then taken over); null when nothing waits.
   */
  nextDueAt(): number | null {
    const due = this.sql(
      `SELECT next_attempt_at FROM submission_recipients
       WHERE status IN ('queued', 'deferred') AND claimed_at IS NULL ORDER BY next_attempt_at LIMIT 1`,
    )
      .pluck()
      .get() as number | undefined;
    const lease = this.sql('SELECT min(coalesce(lease_until, 0)) FROM submission_recipients WHERE claimed_at IS NOT NULL').pluck().get() as number | null;
    const times = [due ?? null, lease].filter((time): time is number => time !== null);
    return times.length === 0 ? null : Math.min(...times);
  }

  /**
   * Claims for `nodeId` until `leaseUntil` those of `ids` that are still pending and unheld;
   * returns the ids claimed. A claimed row is not due to anyone else until it is released or
   * its lease runs out.
   */
  claim(ids: readonly number[], now: number, nodeId: string, leaseUntil: number): number[] {
    const claim = this.sql(
      `UPDATE submission_recipients SET claimed_at = ?, data_sent_at = NULL, claimed_by = ?, lease_until = ?
       WHERE id = ? AND claimed_at IS NULL AND status IN ('queued', 'deferred')`,
    );
    return ids.filter((id) => claim.run(now, nodeId, leaseUntil, id).changes === 1);
  }

  /** The next server answered DATA with 354 for these recipients `nodeId` holds: the message goes out next. Returns how many it still held. */
  markDataSent(ids: readonly number[], now: number, nodeId: string): number {
    const mark = this.sql('UPDATE submission_recipients SET data_sent_at = ? WHERE id = ? AND claimed_by = ?');
    return ids.filter((id) => mark.run(now, id, nodeId).changes === 1).length;
  }

  /** Drops `nodeId`'s claim on the recipient; false when it no longer holds it (its lease ran out and another node took it). */
  release(id: number, nodeId: string): boolean {
    return (
      this.sql(
        'UPDATE submission_recipients SET claimed_at = NULL, data_sent_at = NULL, claimed_by = NULL, lease_until = NULL WHERE id = ? AND claimed_by = ?',
      ).run(id, nodeId).changes === 1
    );
  }

  /** Drops whoever's claim (a claim being taken over). */
  unclaim(id: number): void {
    this.sql('UPDATE submission_recipients SET claimed_at = NULL, data_sent_at = NULL, claimed_by = NULL, lease_until = NULL WHERE id = ?').run(id);
  }

  /** Renews `nodeId`'s leases on these recipients until `leaseUntil`. */
  renew(ids: readonly number[], nodeId: string, leaseUntil: number): void {
    this.sql('UPDATE submission_recipients SET lease_until = ? WHERE id IN (SELECT value FROM json_each(?)) AND claimed_by = ?').run(
      leaseUntil,
      JSON.stringify(ids),
      nodeId,
    );
  }

  /**
   * Claims to take over at `now`, and whether DATA was reached: those whose lease ran out (or
   * that have none, made before leases), and `ownNodeId`'s (a node starting again under its
   * name), except the ids in `held` (work of this process in progress).
   */
  claimsToTakeOver(now: number, ownNodeId: string | null, held: readonly number[]): { id: number; dataSent: boolean }[] {
    const rows = this.sql(
      `SELECT id, data_sent_at IS NOT NULL AS data_sent FROM submission_recipients
       WHERE claimed_at IS NOT NULL AND (lease_until IS NULL OR lease_until <= ? OR claimed_by = ?)
         AND id NOT IN (SELECT value FROM json_each(?)) ORDER BY id`,
    ).all(now, ownNodeId, JSON.stringify(held)) as { id: number; data_sent: number }[];
    return rows.map((row) => ({ id: row.id, dataSent: row.data_sent === 1 }));
  }

  /** Claims taken at or before `before`, and whether DATA was reached (tests and the status page). */
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
