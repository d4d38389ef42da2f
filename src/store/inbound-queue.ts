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

  /** Up to `limit` due messages, oldest first, after `afterId` (those before it are being delivered). */
  due(now: number, afterId: number, limit: number): QueuedInbound[] {
    return this.sql(
      `SELECT id, received_at AS receivedAt, envelope, raw, attempts FROM inbound_queue
       WHERE id > ? AND due_at <= ? ORDER BY id LIMIT ?`,
    ).all(afterId, now, limit) as QueuedInbound[];
  }

  /** Inside the transaction that stored the message's copies (or gave it up). */
  remove(id: number): void {
    this.sql('DELETE FROM inbound_queue WHERE id = ?').run(id);
  }

  /** A failed delivery: the message waits until `dueAt`. */
  postpone(id: number, dueAt: number): void {
    this.sql('UPDATE inbound_queue SET attempts = attempts + 1, due_at = ? WHERE id = ?').run(dueAt, id);
  }

  /** The earliest time a queued message is due, or null when the queue is empty. */
  nextDueAt(): number | null {
    return this.sql('SELECT min(due_at) FROM inbound_queue').pluck().get() as number | null;
  }

  count(): number {
    return this.sql('SELECT count(*) FROM inbound_queue').pluck().get() as number;
  }
}
