import { open } from 'node:fs/promises';
import type { Db } from './db.js';

interface Outcome {
  ok: boolean;
  value: unknown;
}

interface Job {
  work: () => unknown;
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
}

/**
 * Group commit: jobs that arrive in the same turn of the event loop run in one
 * transaction, and all their promises settle only after that transaction is durable
 * (DESIGN.md: SMTP 250 only after commit). One flush to disk then pays for many messages.
 *
 * Jobs do not get a savepoint each: FTS5 writes its pending index to disk at every
 * savepoint (fts5SavepointMethod), which would make one index segment per message. When a
 * job throws, the whole batch rolls back and each job runs again in its own transaction,
 * so one failure does not undo the others. A job must therefore only touch the database.
 *
 * The flush to disk runs off the event loop. In WAL mode synchronous=FULL differs from
 * NORMAL only in syncing the WAL after each commit (https://sqlite.org/pragma.html#pragma_synchronous);
 * so the batch commits with NORMAL and then fdatasync(2)s the WAL on libuv's thread pool,
 * which is the same durability without blocking SMTP sessions while the disk works.
 * Everything else keeps synchronous=FULL. The rows are visible to readers of this process
 * a moment before they are durable; nobody has been told 250 for them until they are.
 */
export class GroupCommitter {
  private pending: Job[] = [];
  private scheduled = false;
  private readonly walFile: string | null;

  constructor(private readonly db: Db) {
    const wal = db.memory ? false : String(db.pragma('journal_mode', { simple: true })).toLowerCase() === 'wal';
    this.walFile = wal ? `${db.name}-wal` : null;
  }

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
    const outcomes = this.runBatch(jobs);
    const settle = () => jobs.forEach((job, index) => {
      const outcome = outcomes[index];
      if (outcome.ok) job.resolve(outcome.value);
      else job.reject(outcome.value);
    });
    if (this.walFile === null || outcomes.every((outcome) => !outcome.ok)) return settle();
    syncFile(this.walFile).then(settle, (error: unknown) => jobs.forEach((job) => job.reject(error)));
  }

  /** All jobs in one transaction; after a failure, each job alone in its own. */
  private runBatch(jobs: Job[]): Outcome[] {
    try {
      return this.commit(() => jobs.map((job): Outcome => ({ ok: true, value: job.work() })));
    } catch (error) {
      if (jobs.length === 1) return [{ ok: false, value: error }];
    }
    return jobs.map((job): Outcome => {
      try {
        return { ok: true, value: this.commit(job.work) };
      } catch (error) {
        return { ok: false, value: error };
      }
    });
  }

  /** One IMMEDIATE transaction; with a WAL its commit leaves the sync to `syncFile`. */
  private commit<T>(body: () => T): T {
    if (this.walFile === null) return this.db.transaction(body).immediate();
    this.db.pragma('synchronous = NORMAL');
    try {
      return this.db.transaction(body).immediate();
    } finally {
      this.db.pragma('synchronous = FULL');
    }
  }
}

/**
 * fdatasync(2) of a file on the thread pool. A WAL that no longer exists was checkpointed
 * into the database file and synced when the last connection closed.
 */
const syncFile = async (path: string): Promise<void> => {
  let handle;
  try {
    handle = await open(path, 'r+');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return;
    throw error;
  }
  try {
    await handle.datasync();
  } finally {
    await handle.close();
  }
};
