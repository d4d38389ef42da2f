import type { Db } from './db.js';

interface Job {
  work: () => unknown;
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
}

/**
 * Group commit: jobs that arrive in the same turn of the event loop run in one
 * transaction, each in its own savepoint so one failure does not undo the others, and
 * all their promises settle only after the single durable commit (DESIGN.md: SMTP 250
 * only after commit). One fsync then pays for many messages.
 */
export class GroupCommitter {
  private pending: Job[] = [];
  private scheduled = false;

  constructor(private readonly db: Db) {}

  run<T>(work: () => T): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.pending.push({ work, resolve: resolve as (value: unknown) => void, reject });
      if (!this.scheduled) {
        this.scheduled = true;
        setImmediate(() => this.flush());
      }
    });
  }

  private flush(): void {
    const jobs = this.pending;
    this.pending = [];
    this.scheduled = false;
    const outcomes: { ok: boolean; value: unknown }[] = [];
    try {
      this.db
        .transaction(() => {
          for (const job of jobs) outcomes.push(this.runInSavepoint(job));
        })
        .immediate();
    } catch (error) {
      for (const job of jobs) job.reject(error);
      return;
    }
    jobs.forEach((job, index) => {
      const outcome = outcomes[index];
      if (outcome.ok) job.resolve(outcome.value);
      else job.reject(outcome.value);
    });
  }

  private runInSavepoint(job: Job): { ok: boolean; value: unknown } {
    try {
      // A nested better-sqlite3 transaction is a savepoint.
      return { ok: true, value: this.db.transaction(job.work)() };
    } catch (error) {
      return { ok: false, value: error };
    }
  }
}
