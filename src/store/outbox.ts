import type { CommitFeed } from './commit-feed.js';
import type { Db } from './db.js';
import { Repo } from './repo.js';

export interface OutboxEntry {
  id: number;
  topic: string;
  payload: unknown;
  createdAt: number;
}

/** docs/design.md rule 6: written in the transaction of the change, read by workers after it. */
export class OutboxRepo extends Repo {
  constructor(
    db: Db,
    private readonly feed: CommitFeed,
  ) {
    super(db);
  }

  /** Writes the row and stages it on the commit feed, which publishes it once the transaction is durable. */
  add(topic: string, payload: unknown, now: number): number {
    // docs/design.md rule 6: an outbox row belongs to the transaction of the change it describes.
    if (!this.db.inTransaction) throw new Error(`outbox row ${topic} written outside a transaction`);
    const result = this.sql('INSERT INTO outbox (topic, payload, created_at) VALUES (?, ?, ?)').run(topic, JSON.stringify(payload), now);
    const id = Number(result.lastInsertRowid);
    this.feed.stage(topic, payload, id);
    return id;
  }

  after(topic: string, afterId: number, limit: number): OutboxEntry[] {
    const rows = this.sql('SELECT id, topic, payload, created_at AS createdAt FROM outbox WHERE topic = ? AND id > ? ORDER BY id LIMIT ?').all(
      topic,
      afterId,
      limit,
    ) as { id: number; topic: string; payload: string; createdAt: number }[];
    return rows.map((row) => ({ ...row, payload: JSON.parse(row.payload) as unknown }));
  }

  remove(ids: readonly number[]): void {
    const statement = this.sql('DELETE FROM outbox WHERE id = ?');
    for (const id of ids) statement.run(id);
  }
}
