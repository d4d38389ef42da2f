import type { CommitFeed } from './commit-feed.js';
import type { Db } from './db.js';
import { Repo } from './repo.js';

/** A change recorded in the `outbox` table by a version before the webhook events were written in the change's own transaction. */
export interface LegacyOutboxEntry {
  topic: string;
  payload: unknown;
}

/**
 * The changes a transaction makes that others react to (docs/design.md rule 6): staged on the
 * commit feed, where the beforeCommit hooks write their durable records of them (the webhook
 * events, the event log) in the same transaction, and the listeners hear of them after it.
 */
export class ChangeRecorder {
  constructor(
    private readonly db: Db,
    private readonly feed: CommitFeed,
  ) {}

  record(topic: string, payload: unknown): void {
    // docs/design.md rule 6: a change is announced with the transaction that made it, never alone.
    if (!this.db.inTransaction) throw new Error(`change ${topic} recorded outside a transaction`);
    this.feed.stage(topic, payload, true);
  }
}

/**
 * The `outbox` table, where versions before the change recorder kept changes for the webhooks
 * to read with a cursor (outbox_cursors): what they left unread is taken once, at start, and
 * the table is emptied (src/services/webhooks/dispatch.ts drainLegacyOutbox).
 */
export class LegacyOutboxRepo extends Repo {
  /** Rows the webhooks' cursor had not passed, in order. */
  unread(): LegacyOutboxEntry[] {
    const rows = this.sql(
      `SELECT o.topic, o.payload FROM outbox o
       WHERE o.id > coalesce((SELECT c.last_id FROM outbox_cursors c WHERE c.consumer = 'webhooks' AND c.topic = o.topic), 0)
       ORDER BY o.id`,
    ).all() as { topic: string; payload: string }[];
    return rows.map((row) => ({ topic: row.topic, payload: JSON.parse(row.payload) as unknown }));
  }

  hasRows(): boolean {
    return this.sql('SELECT 1 FROM outbox LIMIT 1').get() !== undefined;
  }

  clear(): void {
    this.sql('DELETE FROM outbox').run();
    this.sql('DELETE FROM outbox_cursors').run();
  }
}
