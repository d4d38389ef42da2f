import { Repo } from './repo.js';

export type HostingSource = 'grant' | 'payment';

export interface HostingEvent {
  holderId: string;
  /** Null for the holder's hosting; a domain id for that domain's add-on. */
  domainId: string | null;
  days: number;
  source: HostingSource;
  /** What paid for it (an invoice token) or who granted it. */
  reference: string | null;
  /** The end of the hosting (or add-on) after this extension. */
  expiresAt: number;
  createdAt: number;
}

/** Paid access per domain holder, with every extension recorded (migration 60). */
export class HostingRepo extends Repo {
  /** When the holder's hosting ends; null when it never had any. */
  expiresAt(holderId: string): number | null {
    const row = this.sql('SELECT expires_at AS at FROM hosting WHERE holder_id = ?').get(holderId) as { at: number } | undefined;
    return row ? row.at : null;
  }

  /** Extends from the later of now and the current end; returns the new end. */
  extend(holderId: string, now: number, ms: number): number {
    const row = this.sql(
      `INSERT INTO hosting (holder_id, expires_at, updated_at) VALUES (@holderId, @now + @ms, @now)
       ON CONFLICT (holder_id) DO UPDATE SET expires_at = MAX(expires_at, @now) + @ms, updated_at = @now
       RETURNING expires_at AS at`,
    ).get({ holderId, now, ms }) as { at: number };
    return row.at;
  }

  record(event: HostingEvent): void {
    this.sql(
      `INSERT INTO hosting_events (holder_id, domain_id, days, source, reference, expires_at, created_at)
       VALUES (@holderId, @domainId, @days, @source, @reference, @expiresAt, @createdAt)`,
    ).run(event);
  }

  events(holderId: string): HostingEvent[] {
    return this.sql(
      `SELECT holder_id AS holderId, domain_id AS domainId, days, source, reference, expires_at AS expiresAt, created_at AS createdAt
       FROM hosting_events WHERE holder_id = ? ORDER BY id`,
    ).all(holderId) as HostingEvent[];
  }
}
