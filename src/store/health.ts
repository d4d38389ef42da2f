import { Repo } from './repo.js';

/** A queue's size and its oldest entries, in Unix milliseconds (null when empty). */
export interface QueueFigures {
  depth: number;
  /** When the oldest waiting entry was created. */
  oldestCreatedAt: number | null;
  /** The earliest time an entry is due (a past time means it waits for a worker). */
  earliestDueAt: number | null;
}

/**
 * The figures the status page and metrics read. Each query stays on a partial index of
 * waiting rows, so its cost follows the backlog, not the history.
 */
export class HealthRepo extends Repo {
  /** Throws when the database cannot answer. */
  ping(): void {
    this.sql('SELECT 1').get();
  }

  /** Received messages queued during a burst, not yet in their mailboxes. */
  inboundQueue(): QueueFigures {
    // Ids grow with arrival, so the oldest is the lowest id; depth and earliest read the due-time index (migration 83).
    return this.sql(
      `SELECT (SELECT count(*) FROM inbound_queue) AS depth,
              (SELECT received_at FROM inbound_queue ORDER BY id LIMIT 1) AS oldestCreatedAt,
              (SELECT min(due_at) FROM inbound_queue) AS earliestDueAt`,
    ).get() as QueueFigures;
  }

  /** Remote recipients still to deliver (queued or deferred). */
  deliveryQueue(): QueueFigures {
    return this.sql(
      `SELECT count(*) AS depth, min(created_at) AS oldestCreatedAt, min(next_attempt_at) AS earliestDueAt
       FROM submission_recipients INDEXED BY submission_recipients_due WHERE status IN ('queued', 'deferred')`,
    ).get() as QueueFigures;
  }

  /** Webhook events not yet delivered, failed or cancelled. */
  webhookBacklog(): QueueFigures {
    return this.sql(
      `SELECT count(*) AS depth, min(created_at) AS oldestCreatedAt, min(next_attempt_at) AS earliestDueAt
       FROM webhook_events INDEXED BY webhook_events_due WHERE status = 'pending'`,
    ).get() as QueueFigures;
  }
}
