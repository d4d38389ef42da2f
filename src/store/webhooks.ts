import type { SubscribableEvent } from '../core/webhooks.js';
import { Repo } from './repo.js';

export type WebhookStatus = 'registered' | 'verified' | 'paused' | 'revoked';

export interface WebhookEndpointRecord {
  id: string;
  accountId: string;
  url: string;
  events: SubscribableEvent[];
  /** No events about received mail the junk filter filed in Junk. */
  skipJunk: boolean;
  signingSecret: string | null;
  status: WebhookStatus;
  pausedReason: string | null;
  baselineMailboxId: string | null;
  baselineUidValidity: string | null;
  baselineUid: number | null;
  verifiedAt: number | null;
  createdAt: number;
}

export interface InboxBaseline {
  mailboxId: string;
  uidValidity: string;
  /** The highest UID in INBOX at verification: messages up to it never produce events. */
  uid: number;
}

interface EndpointRow extends Omit<WebhookEndpointRecord, 'events' | 'skipJunk'> {
  eventsJson: string;
  skipJunk: number;
}

const COLUMNS = `id, account_id AS accountId, url, events_json AS eventsJson, skip_junk AS skipJunk, signing_secret AS signingSecret, status,
  paused_reason AS pausedReason, baseline_mailbox_id AS baselineMailboxId, baseline_uid_validity AS baselineUidValidity,
  baseline_uid AS baselineUid, verified_at AS verifiedAt, created_at AS createdAt`;

const toRecord = ({ eventsJson, skipJunk, ...row }: EndpointRow): WebhookEndpointRecord => ({
  ...row,
  events: JSON.parse(eventsJson) as SubscribableEvent[],
  skipJunk: skipJunk === 1,
});

/** Webhook endpoints: at most one not revoked per account (a partial unique index). */
export class WebhookEndpointRepo extends Repo {
  insert(endpoint: {
    id: string;
    accountId: string;
    url: string;
    events: SubscribableEvent[];
    skipJunk: boolean;
    signingSecret: string;
    createdAt: number;
  }): void {
    this.sql(
      `INSERT INTO webhook_endpoints (id, account_id, url, events_json, skip_junk, signing_secret, status, created_at)
       VALUES (?, ?, ?, ?, ?, ?, 'registered', ?)`,
    ).run(
      endpoint.id,
      endpoint.accountId,
      endpoint.url,
      JSON.stringify(endpoint.events),
      endpoint.skipJunk ? 1 : 0,
      endpoint.signingSecret,
      endpoint.createdAt,
    );
  }

  /** The account's endpoint that is not revoked, if any. */
  currentOfAccount(accountId: string): WebhookEndpointRecord | null {
    const row = this.sql(`SELECT ${COLUMNS} FROM webhook_endpoints WHERE account_id = ? AND status <> 'revoked'`).get(accountId) as EndpointRow | undefined;
    return row ? toRecord(row) : null;
  }

  byId(id: string): WebhookEndpointRecord | null {
    const row = this.sql(`SELECT ${COLUMNS} FROM webhook_endpoints WHERE id = ?`).get(id) as EndpointRow | undefined;
    return row ? toRecord(row) : null;
  }

  markVerified(id: string, baseline: InboxBaseline, now: number): void {
    this.sql(
      `UPDATE webhook_endpoints SET status = 'verified', paused_reason = NULL, baseline_mailbox_id = ?,
         baseline_uid_validity = ?, baseline_uid = ?, verified_at = ?
       WHERE id = ? AND status <> 'revoked'`,
    ).run(baseline.mailboxId, baseline.uidValidity, baseline.uid, now, id);
  }

  /** Only a verified endpoint pauses; returns whether this call paused it. */
  pause(id: string, reason: string): boolean {
    return this.sql(`UPDATE webhook_endpoints SET status = 'paused', paused_reason = ? WHERE id = ? AND status = 'verified'`).run(reason, id).changes === 1;
  }

  /** DELETE erases the signing configuration (docs/agents/webhooks.md). */
  revoke(id: string, now: number): boolean {
    return (
      this.sql(
        `UPDATE webhook_endpoints SET status = 'revoked', signing_secret = NULL, revoked_at = ?
       WHERE id = ? AND status <> 'revoked'`,
      ).run(now, id).changes === 1
    );
  }
}
