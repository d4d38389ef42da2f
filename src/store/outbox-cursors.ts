import { Repo } from './repo.js';

/**
 * How far each consumer has read each outbox topic. Reading advances a cursor instead of
 * deleting rows, so several consumers can read one topic and the rows stay as a record of
 * what was written; `pruneConsumed` drops rows every consumer of their topic has passed.
 */
export class OutboxCursorRepo extends Repo {
  position(consumer: string, topic: string): number {
    const row = this.sql('SELECT last_id AS lastId FROM outbox_cursors WHERE consumer = ? AND topic = ?').get(consumer, topic) as
      | { lastId: number }
      | undefined;
    return row ? row.lastId : 0;
  }

  advance(consumer: string, topic: string, lastId: number): void {
    this.sql(
      `INSERT INTO outbox_cursors (consumer, topic, last_id) VALUES (?, ?, ?)
       ON CONFLICT (consumer, topic) DO UPDATE SET last_id = max(last_id, excluded.last_id)`,
    ).run(consumer, topic, lastId);
  }

  /** Deletes rows older than `before` that every consumer of their topic has read; returns how many. */
  pruneConsumed(before: number): number {
    const topics = this.sql('SELECT topic, min(last_id) AS lastId FROM outbox_cursors GROUP BY topic').all() as { topic: string; lastId: number }[];
    let removed = 0;
    for (const { topic, lastId } of topics) {
      removed += this.sql('DELETE FROM outbox WHERE topic = ? AND id <= ? AND created_at < ?').run(topic, lastId, before).changes;
    }
    return removed;
  }
}
