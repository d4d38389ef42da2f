import { Repo } from './repo.js';

/** A calendar job's row: its schedule and the next run it is due for. */
export interface ScheduledJobRecord {
  name: string;
  schedule: string;
  nextRunAt: number;
  lastStartedAt: number | null;
  lastFinishedAt: number | null;
  lastError: string | null;
  /** The node that took the last run (migration 85). */
  takenBy: string | null;
}

/** The calendar's due rows (migration 80). */
export class ScheduledJobRepo extends Repo {
  /** The job's row as configured: a new job, or one whose schedule changed, is due at `nextRunAt`. */
  register(name: string, schedule: string, nextRunAt: number): void {
    this.sql(
      `INSERT INTO scheduled_jobs (name, schedule, next_run_at) VALUES (?, ?, ?)
       ON CONFLICT (name) DO UPDATE SET schedule = excluded.schedule, next_run_at = excluded.next_run_at
       WHERE scheduled_jobs.schedule <> excluded.schedule`,
    ).run(name, schedule, nextRunAt);
  }

  /** The earliest next run among `names`, or null. */
  nextDueAt(names: readonly string[]): number | null {
    return this.sql('SELECT min(next_run_at) FROM scheduled_jobs WHERE name IN (SELECT value FROM json_each(?))').pluck().get(JSON.stringify(names)) as
      | number
      | null;
  }

  /** Jobs among `names` due at `now`, with the run each is due for. */
  due(names: readonly string[], now: number): { name: string; nextRunAt: number }[] {
    return this.sql(
      `SELECT name, next_run_at AS nextRunAt FROM scheduled_jobs
       WHERE name IN (SELECT value FROM json_each(?)) AND next_run_at <= ? ORDER BY next_run_at, name`,
    ).all(JSON.stringify(names), now) as { name: string; nextRunAt: number }[];
  }

  /**
   * Takes the run due at `dueAt` for `nodeId`, moving the row to `nextRunAt`: true for exactly
   * one caller per run, whoever else (in this process or another) asks for the same one.
   */
  take(name: string, dueAt: number, nextRunAt: number, now: number, nodeId: string): boolean {
    return (
      this.sql('UPDATE scheduled_jobs SET next_run_at = ?, last_started_at = ?, taken_by = ? WHERE name = ? AND next_run_at = ?').run(
        nextRunAt,
        now,
        nodeId,
        name,
        dueAt,
      ).changes === 1
    );
  }

  finished(name: string, now: number, error: string | null): void {
    this.sql('UPDATE scheduled_jobs SET last_finished_at = ?, last_error = ? WHERE name = ?').run(now, error, name);
  }

  byName(name: string): ScheduledJobRecord | null {
    const row = this.sql(
      `SELECT name, schedule, next_run_at AS nextRunAt, last_started_at AS lastStartedAt, last_finished_at AS lastFinishedAt,
       last_error AS lastError, taken_by AS takenBy FROM scheduled_jobs WHERE name = ?`,
    ).get(name) as ScheduledJobRecord | undefined;
    return row ?? null;
  }
}
