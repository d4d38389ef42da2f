import { closeSync, fdatasync, openSync } from 'node:fs';
import type { CommitFeed } from './commit-feed.js';
import type { Db } from './db.js';
import { pragma, transactionOf } from './statements.js';
import type { ConnectionTurns } from './unit.js';

interface Outcome {
  ok: boolean;
  value: unknown;
}

/** What makes a committed batch durable. */
export interface Durable {
  sync(): Promise<void>;
  close(): void;
}

interface Job {
  work: () => unknown;
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
}

/**
 * Group commit: jobs that arrive in the same turn of the event loop run in one
 * transaction, and all their promises settle only after that transaction is durable
 * (docs/design.md "Durability and correctness": SMTP 250 only after commit). One flush to
 * disk then pays for many messages.
 *
 * Jobs do not get a savepoint each: FTS5 writes its pending index to disk at every
 * savepoint (fts5SavepointMethod), which would make one index segment per message. When a
 * job throws, the whole batch rolls back and each job runs again in its own transaction,
 * so one failure does not undo the others. A job must therefore only touch the database.
 *
 * One batch is in flight at a time: jobs that arrive while a batch is being synced wait
 * and go into the next batch together, as soon as the sync ends. A commit has a fixed cost
 * (every page it touched goes whole into the WAL; with the full-text index still written
 * per batch then, ingest batches were tiny and each commit wrote an FTS5 segment:
 * docs/contributing/benchmarks.md),
 * so fewer, larger batches are what lets ingest keep up; a lone job still commits in the
 * next turn.
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
  private syncing = false;
  private readonly wal: Durable | null;

  /** `wal` replaces the WAL file's sync (tests hold a batch in flight with it). */
  constructor(
    private readonly db: Db,
    private readonly feed: CommitFeed,
    private readonly turns: ConnectionTurns,
    wal?: Durable,
  ) {
    const inWalMode = db.memory ? false : String(pragma(db, 'journal_mode')).toLowerCase() === 'wal';
    this.wal = inWalMode ? (wal ?? new WalFile(`${db.name}-wal`)) : null;
  }

  run<T>(work: () => Promise<T> | T): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.pending.push({ work, resolve: resolve as (value: unknown) => void, reject });
      this.schedule();
    });
  }

  /** Releases the WAL's file descriptor; the store calls it when it closes. */
  close(): void {
    this.wal?.close();
  }

  private schedule(): void {
    if (this.scheduled || this.syncing || this.pending.length === 0) return;
    this.scheduled = true;
    setImmediate(() => void this.flush());
  }

  private async flush(): Promise<void> {
    this.scheduled = false;
    if (this.syncing) return; // a job queued more work mid-batch: it waits for this sync
    const jobs = this.pending;
    this.pending = [];
    const mark = this.feed.mark();
    this.syncing = true; // one batch in flight, from waiting for its turn to the end of its sync
    const outcomes = await this.turns.open(() => this.runBatch(jobs, mark));
    const committed = this.feed.take(mark);
    // Consumers hear of the batch once it is durable, before its callers do.
    const settle = () => (
      this.feed.publish(committed),
      jobs.forEach((job, index) => {
        const outcome = outcomes[index];
        if (outcome.ok) job.resolve(outcome.value);
        else job.reject(outcome.value);
      })
    );
    if (this.wal === null || outcomes.every((outcome) => !outcome.ok)) {
      this.syncing = false;
      settle();
      return this.schedule();
    }
    // The next batch is scheduled before callers hear of this one, so it is not held up by them.
    const ended = () => {
      this.syncing = false;
      this.schedule();
    };
    this.wal.sync().then(
      () => (ended(), settle()),
      (error: unknown) => (ended(), jobs.forEach((job) => job.reject(error))),
    );
  }

  /**
   * All jobs in one transaction; after a failure, each job alone in its own. What a
   * rolled-back attempt staged on the feed is forgotten (`mark` is where the batch began).
   */
  private async runBatch(jobs: Job[], mark: number): Promise<Outcome[]> {
    try {
      return await this.commit(async () => {
        const outcomes: Outcome[] = [];
        for (const job of jobs) outcomes.push({ ok: true, value: await job.work() });
        await this.feed.prepare(mark);
        return outcomes;
      });
    } catch (error) {
      this.feed.rewind(mark);
      if (jobs.length === 1) return [{ ok: false, value: error }];
    }
    const outcomes: Outcome[] = [];
    for (const job of jobs) outcomes.push(await this.alone(job));
    return outcomes;
  }

  /** One job in its own transaction, after its batch failed. */
  private async alone(job: Job): Promise<Outcome> {
    const jobMark = this.feed.mark();
    try {
      const value = await this.commit(async () => {
        const value = await job.work();
        await this.feed.prepare(jobMark);
        return value;
      });
      return { ok: true, value };
    } catch (error) {
      this.feed.rewind(jobMark);
      return { ok: false, value: error };
    }
  }

  /**
   * One IMMEDIATE transaction; with a WAL its commit does not wait for the disk
   * (synchronous=NORMAL for it alone) and leaves the sync to the WAL file's fdatasync.
   */
  private async commit<T>(body: () => Promise<T>): Promise<T> {
    if (this.wal !== null) pragma(this.db, 'synchronous = NORMAL');
    try {
      return await transactionOf(this.db, 'BEGIN IMMEDIATE', async () => {
        const result = await body();
        this.turns.checkTurn();
        return result;
      });
    } finally {
      if (this.wal !== null) pragma(this.db, 'synchronous = FULL');
    }
  }
}

/**
 * The WAL, kept open for fdatasync(2) on libuv's thread pool. SQLite never removes the WAL
 * while a connection (ours) has the database open, so one descriptor serves the store's
 * life; it is opened at the first sync, because the WAL exists only after a commit.
 */
class WalFile implements Durable {
  private fd: number | null = null;
  private inFlight: Promise<void> | null = null;
  private closing = false;

  constructor(private readonly path: string) {}

  sync(): Promise<void> {
    const done = new Promise<void>((resolve, reject) => {
      try {
        this.fd ??= openSync(this.path, 'r+');
      } catch (error) {
        // A WAL that no longer exists was checkpointed and synced by the last connection's close.
        return (error as NodeJS.ErrnoException).code === 'ENOENT' ? resolve() : reject(error);
      }
      fdatasync(this.fd, (error) => (error ? reject(error) : resolve()));
    });
    const ended = () => {
      this.inFlight = null;
      if (this.closing) this.close();
    };
    this.inFlight = done.then(ended, ended);
    return done;
  }

  /** Closes the descriptor now, or once a sync in flight on it has ended. */
  close(): void {
    this.closing = true;
    if (this.inFlight !== null || this.fd === null) return;
    closeSync(this.fd);
    this.fd = null;
  }
}
