import { Repo } from './repo.js';

export class RateLimitRepo extends Repo {
  /** How many events of (bucket, subject) happened at or after `since` (an index-only count). */
  countSince(bucket: string, subject: string, since: number): number {
    return this.sql('SELECT count(*) FROM rate_events WHERE bucket = ? AND subject = ? AND at >= ?').pluck().get(bucket, subject, since) as number;
  }

  /** The time of the event at 0-based position `index` among those at or after `since`, oldest first. */
  timeAt(bucket: string, subject: string, since: number, index: number): number | null {
    const at = this.sql('SELECT at FROM rate_events WHERE bucket = ? AND subject = ? AND at >= ? ORDER BY at LIMIT 1 OFFSET ?')
      .pluck()
      .get(bucket, subject, since, index) as number | undefined;
    return at ?? null;
  }

  record(bucket: string, subject: string, at: number): void {
    this.sql('INSERT INTO rate_events (bucket, subject, at) VALUES (?, ?, ?)').run(bucket, subject, at);
  }

  pruneBefore(before: number): number {
    return this.sql('DELETE FROM rate_events WHERE at < ?').run(before).changes;
  }
}
