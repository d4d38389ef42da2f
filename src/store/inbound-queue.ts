import { Repo } from './repo.js';

/** A message the MX accepted and has not delivered into its mailboxes yet. */
export interface QueuedInbound {
  id: number;
  /** Unix milliseconds of the 250. */
  receivedAt: number;
  /** The service's own serialization of the envelope (session, MAIL FROM, recipients). */
  envelope: string;
  raw: Buffer;
  attempts: number;
}

/** The inbound queue (migration 74): rows in arrival order, each gone once delivered. */
export class InboundQueueRepo extends Repo {
  /** Inside the transaction the 250 waits for. */
  add(receivedAt: number, envelope: string, raw: Buffer): number {
    return Number(
      this.sql('INSERT INTO inbound_queue (received_at, due_at, envelope, raw) VALUES (?, ?, ?, ?)').run(receivedAt, receivedAt, envelope, raw).lastInsertRowid,
    );
  }

  /**
   * Claims for `nodeId` until `leaseUntil` up to `limit` due messages after `afterId` (those
   * before it are being delivered) that no live claim holds, oldest first, and returns them.
   * Run in a transaction: a message is stored by one node at a time.
   */
  claimDue(now: number, afterId: number, limit: number, nodeId: string, leaseUntil: number): QueuedInbound[] {
    const rows = this.sql(
      `UPDATE inbound_queue SET claimed_by = ?, lease_until = ?
       WHERE id IN (SELECT id FROM inbound_queue
         WHERE id > ? AND due_at <= ? AND (lease_until IS NULL OR lease_until <= ?) ORDER BY id LIMIT ?)
       RETURNING id, received_at AS receivedAt, envelope, raw, attempts`,
    ).all(nodeId, leaseUntil, afterId, now, now, limit) as QueuedInbound[];
    return rows.sort((a, b) => a.id - b.id);
  }

  /**
   * Inside the transaction that stores the message's copies (or gives it up): false when
   * `nodeId` no longer holds it (its lease ran out and another node took it), and then the
   * copies must not be stored.
   */
  remove(id: number, nodeId: string): boolean {
    return this.sql('DELETE FROM inbound_queue WHERE id = ? AND claimed_by = ?').run(id, nodeId).changes === 1;
  }

  /** A failed delivery: the message waits until `dueAt`, unclaimed. */
  postpone(id: number, dueAt: number, nodeId: string): void {
    this.sql('UPDATE inbound_queue SET attempts = attempts + 1, due_at = ?, claimed_by = NULL, lease_until = NULL WHERE id = ? AND claimed_by = ?').run(
      dueAt,
      id,
      nodeId,
    );
  }

  /** Renews `nodeId`'s claims on these messages until `leaseUntil`. */
  renew(ids: readonly number[], nodeId: string, leaseUntil: number): void {
    this.sql('UPDATE inbound_queue SET lease_until = ? WHERE id IN (SELECT value FROM json_each(?)) AND claimed_by = ?').run(
      leaseUntil,
      JSON.stringify(ids),
      nodeId,
    );
  }

  /** Gives up every claim `nodeId` holds (the node starting again: none of its deliveries runs). */
  releaseClaimsOf(nodeId: string): void {
    this.sql('UPDATE inbound_queue SET claimed_by = NULL, lease_until = NULL WHERE claimed_by = ?').run(nodeId);
  }

  /**
   * The earliest time a queued message is due, or null when the queue is empty. A message a
   * live node holds is due when its lease runs out (should that node die, another takes it).
   */
  nextDueAt(): number | null {
    // Two walks of an index each (migrations 83 and 85), not a scan of a queue a burst fills.
    const unclaimed = this.sql('SELECT due_at FROM inbound_queue WHERE lease_until IS NULL ORDER BY due_at LIMIT 1').pluck().get() as number | undefined;
    const lease = this.sql('SELECT min(lease_until) FROM inbound_queue WHERE lease_until IS NOT NULL').pluck().get() as number | null;
    const times = [unclaimed ?? null, lease].filter((time): time is number => time !== null);
    return times.length === 0 ? null : Math.min(...times);
  }

  count(): number {
    return this.sql('SELECT count(*) FROM inbound_queue').pluck().get() as number;
  }
}
