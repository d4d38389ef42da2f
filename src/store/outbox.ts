import { Signal } from '../core/signal.js';
import { Repo } from './repo.js';

export interface OutboxEntry {
  id: number;
  topic: string;
  payload: unknown;
  createdAt: number;
}

/** DESIGN.md rule 6: written in the transaction of the change, read by workers after it. */
export class OutboxRepo extends Repo {
  /**
   * Notified when a row is written. Transactions here are synchronous, so a listener that
   * defers its work (setImmediate) runs after the commit; main.ts kicks workers with it.
   */
  readonly written = new Signal();

  add(topic: string, payload: unknown, now: number): number {
    const result = this.sql('INSERT INTO outbox (topic, payload, created_at) VALUES (?, ?, ?)')
      .run(topic, JSON.stringify(payload), now);
    this.written.notify();
    return Number(result.lastInsertRowid);
  }

  after(topic: string, afterId: number, limit: number): OutboxEntry[] {
    const rows = this.sql('SELECT id, topic, payload, created_at AS createdAt FROM outbox WHERE topic = ? AND id > ? ORDER BY id LIMIT ?')
      .all(topic, afterId, limit) as { id: number; topic: string; payload: string; createdAt: number }[];
    return rows.map((row) => ({ ...row, payload: JSON.parse(row.payload) as unknown }));
  }

  remove(ids: readonly number[]): void {
    const statement = this.sql('DELETE FROM outbox WHERE id = ?');
    for (const id of ids) statement.run(id);
  }
}
