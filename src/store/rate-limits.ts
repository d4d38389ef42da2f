import { Repo } from './repo.js';

export class RateLimitRepo extends Repo {

  /** Events of (bucket, subject) at or after `since`, oldest first. */
  timesSince(bucket: string, subject: string, since: number): number[] {
    const rows = this.sql('SELECT at FROM rate_events WHERE bucket = ? AND subject = ? AND at >= ? ORDER BY at')
      .all(bucket, subject, since) as { at: number }[];
    return rows.map((row) => row.at);
  }

  record(bucket: string, subject: string, at: number): void {
    this.sql('INSERT INTO rate_events (bucket, subject, at) VALUES (?, ?, ?)').run(bucket, subject, at);
  }

  pruneBefore(before: number): number {
    return this.sql('DELETE FROM rate_events WHERE at < ?').run(before).changes;
  }
}
