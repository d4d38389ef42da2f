import type { Statement } from 'better-sqlite3';
import type Database from 'better-sqlite3';

/** The one SQLite connection every repository uses. */
export type Db = Database.Database;

/**
 * Statements are prepared once per connection and kept while it lives, never left to the
 * garbage collector. On Node 24 (which the single executable carries) better-sqlite3 12's
 * Statement derives from node::ObjectWrap, whose destructor aborts the process when a
 * collection finalizes it while no JavaScript context is entered (an idle GC): "Assertion
 * failed: (env) != nullptr" in RemoveEnvironmentCleanupHook. `db.pragma()` prepares a new
 * statement on every call, so PRAGMAs go through here too.
 */
const kept = new WeakMap<Db, Map<string, Statement>>();

export const keptStatement = (db: Db, text: string): Statement => {
  let statements = kept.get(db);
  if (!statements) {
    statements = new Map();
    kept.set(db, statements);
  }
  let statement = statements.get(text);
  if (!statement) {
    statement = db.prepare(text);
    statements.set(text, statement);
  }
  return statement;
};

/** `PRAGMA <text>`: the first column of its row for a PRAGMA that answers, else undefined. */
export const pragma = (db: Db, text: string): unknown => {
  const statement = keptStatement(db, `PRAGMA ${text}`);
  if (!statement.reader) {
    statement.run();
    return undefined;
  }
  return statement.pluck().get();
};

/**
 * `work` in one IMMEDIATE transaction whose commit does not wait for the disk
 * (synchronous=NORMAL for it alone, FULL again after): what it wrote is durable once the WAL is
 * next synced, by the group commit's fdatasync or a later synced commit (SQLite also syncs the
 * WAL before any checkpoint). For writes nobody may rely on until then.
 */
export const unsyncedTransaction = <T>(db: Db, work: () => T): T => {
  pragma(db, 'synchronous = NORMAL');
  try {
    return db.transaction(work).immediate();
  } finally {
    pragma(db, 'synchronous = FULL');
  }
};

/**
 * `body` between `begin` (BEGIN IMMEDIATE or DEFERRED) and COMMIT on `db`, rolled back when it
 * throws: one unit of work's transaction (index.ts, group-commit.ts), its body free to await.
 */
export const transactionOf = async <T>(db: Db, begin: string, body: () => Promise<T> | T): Promise<T> => {
  keptStatement(db, begin).run();
  try {
    const result = await body();
    keptStatement(db, 'COMMIT').run();
    return result;
  } catch (error) {
    if (db.inTransaction) keptStatement(db, 'ROLLBACK').run();
    throw error;
  }
};
