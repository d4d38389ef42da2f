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
  /** The webhook endpoint that takes it, or null: then it is only in the account's event log (the event stream). */
  endpointId: string | null;
  type: string;
  body: string;
  createdAt: number;
}

/** An event as the event stream sends it: the exact body the webhook gets. */
export interface LoggedEvent {
  seq: number;
  id: string;
  type: string;
  body: string;
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
  /**
   * Logs an event (migration 52); one for an endpoint is due at once (attempt 1 of the
   * schedule is at 0 s). Returns its sequence number, the event stream's order.
   */
  insert(event: NewWebhookEvent): number {
    const forEndpoint = event.endpointId !== null;
    const result = this.sql(
      `INSERT INTO webhook_events (id, account_id, endpoint_id, type, body, status, next_attempt_at, created_at)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?)`,
    ).run(
      event.id,
      event.accountId,
      event.endpointId,
      event.type,
      event.body,
      forEndpoint ? 'pending' : null,
      forEndpoint ? event.createdAt : null,
      event.createdAt,
    );
    return Number(result.lastInsertRowid);
  }

  /** The account's events after `afterSeq` of these types, created at `since` or later, in order: what an event stream sends. */
  logAfter(accountId: string, afterSeq: number, types: readonly string[], since: number, limit: number): LoggedEvent[] {
    return this.sql(
      `SELECT seq, id, type, body FROM webhook_events
       WHERE account_id = ? AND seq > ? AND created_at >= ? AND type IN (SELECT value FROM json_each(?)) ORDER BY seq LIMIT ?`,
    ).all(accountId, afterSeq, since, JSON.stringify(types), limit) as LoggedEvent[];
  }

  /** The sequence number of one of the account's events (a stream resumes after it), or null. */
  seqOf(accountId: string, id: string): number | null {
    const seq = this.sql('SELECT seq FROM webhook_events WHERE id = ? AND account_id = ?').pluck().get(id, accountId) as number | undefined;
    return seq ?? null;
  }

  /** The newest sequence number of the account's log (0 when empty): a new stream starts after it. */
  lastSeq(accountId: string): number {
    return this.sql('SELECT coalesce(max(seq), 0) FROM webhook_events WHERE account_id = ?').pluck().get(accountId) as number;
  }

  /**
   * The accounts with events logged after `afterSeq`, each with its newest: what another
   * process logged since the last look (seq is the order of commits: docs/design.md,
   * "Several processes: wake-ups and exactness").
   */
  accountsLoggedAfter(afterSeq: number): { accountId: string; seq: number }[] {
    return this.sql('SELECT account_id AS accountId, max(seq) AS seq FROM webhook_events WHERE seq > ? GROUP BY account_id').all(afterSeq) as {
      accountId: string;
      seq: number;
    }[];
  }

  /** The newest sequence number of the whole log (0 when empty). */
  newestSeq(): number {
    return this.sql('SELECT coalesce(max(seq), 0) FROM webhook_events').pluck().get() as number;
  }

  /** Whether a pending event not among `excluded` is due at `now` and free to lease: a read, so an idle run writes nothing. */
  anyDue(now: number, excluded: readonly number[]): boolean {
    return (
      this.sql(
        `SELECT 1 FROM webhook_events
         WHERE status = 'pending' AND next_attempt_at <= ? AND (lease_until IS NULL OR lease_until <= ?)
           AND seq NOT IN (SELECT value FROM json_each(?)) LIMIT 1`,
      ).get(now, now, JSON.stringify(excluded)) !== undefined
    );
  }

  /**
   * Leases to `nodeId` until `leaseUntil` up to `limit` pending events whose next attempt is due
   * and that no live lease holds, oldest due first, leaving out `excluded` (attempts this node
   * has in flight); returns them. Run in a transaction: an event is attempted by one node at a time.
   */
  leaseDue(now: number, limit: number, excluded: readonly number[], nodeId: string, leaseUntil: number): WebhookEventRecord[] {
    const rows = this.sql(
      `UPDATE webhook_events SET leased_by = ?, lease_until = ?
       WHERE seq IN (SELECT seq FROM webhook_events
         WHERE status = 'pending' AND next_attempt_at <= ? AND (lease_until IS NULL OR lease_until <= ?)
           AND seq NOT IN (SELECT value FROM json_each(?))
         ORDER BY next_attempt_at, seq LIMIT ?)
       RETURNING ${COLUMNS}`,
    ).all(nodeId, leaseUntil, now, now, JSON.stringify(excluded), limit) as WebhookEventRecord[];
    return rows.sort((a, b) => (a.nextAttemptAt ?? 0) - (b.nextAttemptAt ?? 0) || a.seq - b.seq);
  }

  /**
   * The earliest next attempt of a pending event not among `excluded` (attempts in flight) and
   * not leased by a live node at `now`, or null. An event another node holds is its own; should
   * that node die, the periodic look for run-out leases finds it (src/runtime/lease-keeper.ts).
   */
  nextDueAt(excluded: readonly number[], now: number): number | null {
    const at = this.sql(
      `SELECT next_attempt_at FROM webhook_events
       WHERE status = 'pending' AND seq NOT IN (SELECT value FROM json_each(?)) AND (lease_until IS NULL OR lease_until <= ?)
       ORDER BY next_attempt_at LIMIT 1`,
    )
      .pluck()
      .get(JSON.stringify(excluded), now) as number | null | undefined;
    return at ?? null;
  }

  /** Renews `nodeId`'s leases on these events until `leaseUntil`. */
  renew(seqs: readonly number[], nodeId: string, leaseUntil: number): void {
    this.sql('UPDATE webhook_events SET lease_until = ? WHERE seq IN (SELECT value FROM json_each(?)) AND leased_by = ?').run(
      leaseUntil,
      JSON.stringify(seqs),
      nodeId,
    );
  }

  /** Gives up `nodeId`'s lease on the event (an attempt cut short by shutdown). */
  releaseLease(seq: number, nodeId: string): void {
    this.sql('UPDATE webhook_events SET leased_by = NULL, lease_until = NULL WHERE seq = ? AND leased_by = ?').run(seq, nodeId);
  }

  /** Gives up every lease `nodeId` holds (the node starting again: none of its attempts runs). */
  releaseLeasesOf(nodeId: string): void {
    this.sql('UPDATE webhook_events SET leased_by = NULL, lease_until = NULL WHERE leased_by = ?').run(nodeId);
  }

  bySeq(seq: number): WebhookEventRecord | null {
    return (this.sql(`SELECT ${COLUMNS} FROM webhook_events WHERE seq = ?`).get(seq) as WebhookEventRecord | undefined) ?? null;
  }

  byId(accountId: string, id: string): WebhookEventRecord | null {
    const row = this.sql(`SELECT ${COLUMNS} FROM webhook_events WHERE id = ? AND account_id = ? AND endpoint_id IS NOT NULL`).get(id, accountId);
    return (row as WebhookEventRecord | undefined) ?? null;
  }

  /** The webhook deliveries (events an endpoint took), newest first; `beforeSeq` is the cursor of the previous page. */
  page(accountId: string, since: number, beforeSeq: number | null, limit: number): WebhookEventRecord[] {
    return this.sql(
      `SELECT ${COLUMNS} FROM webhook_events
       WHERE account_id = ? AND created_at >= ? AND seq < ? AND endpoint_id IS NOT NULL ORDER BY seq DESC LIMIT ?`,
    ).all(accountId, since, beforeSeq ?? Number.MAX_SAFE_INTEGER, limit) as WebhookEventRecord[];
  }

  attemptsOf(seq: number): WebhookAttemptRecord[] {
    return this.sql(
      `SELECT replay, at, duration_ms AS durationMs, http_status AS httpStatus, error FROM webhook_attempts
       WHERE event_seq = ? ORDER BY id`,
    ).all(seq) as WebhookAttemptRecord[];
  }

  /**
   * Records an attempt and what it changes, and gives up the lease. A scheduled attempt names
   * its node (`leasedBy`): when the node no longer holds the event (its lease ran out and
   * another node took it over) nothing is recorded and the answer is false. A replay passes null.
   */
  recordAttempt(seq: number, attempt: WebhookAttemptRecord, progress: EventProgress, leasedBy: string | null): boolean {
    const changed = this.sql(
      `UPDATE webhook_events SET status = ?, next_attempt_at = ?, attempts = attempts + 1, last_attempt_at = ?,
         last_error = ?, last_http_status = ?, leased_by = NULL, lease_until = NULL
       WHERE seq = ? AND (? IS NULL OR leased_by = ?)`,
    ).run(progress.status, progress.nextAttemptAt, attempt.at, attempt.error, attempt.httpStatus, seq, leasedBy, leasedBy).changes;
    if (changed === 0) return false;
    this.sql(`INSERT INTO webhook_attempts (event_seq, replay, at, duration_ms, http_status, error) VALUES (?, ?, ?, ?, ?, ?)`).run(
      seq,
      attempt.replay,
      attempt.at,
      attempt.durationMs,
      attempt.httpStatus,
      attempt.error,
    );
    return true;
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

  /** Delivery history is kept `limits.webhookHistoryDays` (30). Attempts go with their event (ON DELETE CASCADE). */
  pruneBefore(before: number): number {
    return this.sql('DELETE FROM webhook_events WHERE created_at < ?').run(before).changes;
  }
}
