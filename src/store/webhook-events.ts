import { Repo } from './repo.js';

export type WebhookEventStatus = 'pending' | 'delivered' | 'failed' | 'cancelled';

export interface WebhookEventRecord {
  seq: number;
  id: string;
  accountId: string;
  endpointId: string;
  type: string;
  /** The exact JSON body, sent byte for byte on every attempt and replay. */
  body: string;
  status: WebhookEventStatus;
  attempts: number;
  replays: number;
  nextAttemptAt: number | null;
  lastAttemptAt: number | null;
  lastError: string | null;
  lastHttpStatus: number | null;
  createdAt: number;
}

export interface NewWebhookEvent {
  id: string;
  accountId: string;
  endpointId: string;
  type: string;
  body: string;
  createdAt: number;
}

export interface WebhookAttemptRecord {
  replay: number;
  at: number;
  durationMs: number;
  httpStatus: number | null;
  error: string | null;
}

/** What an attempt changes on its event. */
export interface EventProgress {
  status: WebhookEventStatus;
  nextAttemptAt: number | null;
}

const COLUMNS = `seq, id, account_id AS accountId, endpoint_id AS endpointId, type, body, status, attempts, replays,
  next_attempt_at AS nextAttemptAt, last_attempt_at AS lastAttemptAt, last_error AS lastError,
  last_http_status AS lastHttpStatus, created_at AS createdAt`;

export class WebhookEventRepo extends Repo {

  /** A new event is due at once (attempt 1 of the schedule is at 0 s). */
  insert(event: NewWebhookEvent): void {
    this.sql(
      `INSERT INTO webhook_events (id, account_id, endpoint_id, type, body, status, next_attempt_at, created_at)
       VALUES (?, ?, ?, ?, ?, 'pending', ?, ?)`,
    ).run(event.id, event.accountId, event.endpointId, event.type, event.body, event.createdAt, event.createdAt);
  }

  /** Pending events whose next attempt is due, oldest due first. */
  due(now: number, limit: number): WebhookEventRecord[] {
    return this.sql(
      `SELECT ${COLUMNS} FROM webhook_events WHERE status = 'pending' AND next_attempt_at <= ? ORDER BY next_attempt_at, seq LIMIT ?`,
    ).all(now, limit) as WebhookEventRecord[];
  }

  bySeq(seq: number): WebhookEventRecord | null {
    return (this.sql(`SELECT ${COLUMNS} FROM webhook_events WHERE seq = ?`).get(seq) as WebhookEventRecord | undefined) ?? null;
  }

  byId(accountId: string, id: string): WebhookEventRecord | null {
    const row = this.sql(`SELECT ${COLUMNS} FROM webhook_events WHERE id = ? AND account_id = ?`).get(id, accountId);
    return (row as WebhookEventRecord | undefined) ?? null;
  }

  /** Newest first; `beforeSeq` is the cursor of the previous page. */
  page(accountId: string, since: number, beforeSeq: number | null, limit: number): WebhookEventRecord[] {
    return this.sql(
      `SELECT ${COLUMNS} FROM webhook_events WHERE account_id = ? AND created_at >= ? AND seq < ? ORDER BY seq DESC LIMIT ?`,
    ).all(accountId, since, beforeSeq ?? Number.MAX_SAFE_INTEGER, limit) as WebhookEventRecord[];
  }

  attemptsOf(seq: number): WebhookAttemptRecord[] {
    return this.sql(
      `SELECT replay, at, duration_ms AS durationMs, http_status AS httpStatus, error FROM webhook_attempts
       WHERE event_seq = ? ORDER BY id`,
    ).all(seq) as WebhookAttemptRecord[];
  }

  recordAttempt(seq: number, attempt: WebhookAttemptRecord, progress: EventProgress): void {
    this.sql(
      `INSERT INTO webhook_attempts (event_seq, replay, at, duration_ms, http_status, error) VALUES (?, ?, ?, ?, ?, ?)`,
    ).run(seq, attempt.replay, attempt.at, attempt.durationMs, attempt.httpStatus, attempt.error);
    this.sql(
      `UPDATE webhook_events SET status = ?, next_attempt_at = ?, attempts = attempts + 1, last_attempt_at = ?,
         last_error = ?, last_http_status = ?
       WHERE seq = ?`,
    ).run(progress.status, progress.nextAttemptAt, attempt.at, attempt.error, attempt.httpStatus, seq);
  }

  /** Cancels every queued event of an endpoint (deleted or paused); returns how many. */
  cancelPending(endpointId: string, reason: string): number {
    return this.sql(
      `UPDATE webhook_events SET status = 'cancelled', next_attempt_at = NULL, last_error = ?
       WHERE endpoint_id = ? AND status = 'pending'`,
    ).run(reason, endpointId).changes;
  }

  /** Takes one of the event's replays if it is completed and has one left; returns its number or null. */
  claimReplay(seq: number, maxReplays: number): number | null {
    const row = this.sql(
      `UPDATE webhook_events SET replays = replays + 1
       WHERE seq = ? AND status IN ('delivered', 'failed') AND replays < ? RETURNING replays`,
    ).get(seq, maxReplays) as { replays: number } | undefined;
    return row ? row.replays : null;
  }

  /** Contract: delivery history is kept 30 days. Attempts go with their event (ON DELETE CASCADE). */
  pruneBefore(before: number): number {
    return this.sql('DELETE FROM webhook_events WHERE created_at < ?').run(before).changes;
  }
}
