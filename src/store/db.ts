import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import Database from 'better-sqlite3';
import { MIGRATIONS } from './migrations/index.js';
import { type Db, keptStatement, pragma } from './statements.js';

export type { Db } from './statements.js';

export interface OpenOptions {
  /** The native addon, passed in by the single executable (see bin/sea-entry.ts). */
  nativeBinding?: object;
}

/**
 * Each connection's page cache, in KiB (SQLite's negative cache_size). better-sqlite3 builds
 * SQLite with 16 MB a connection, and a burst of mail fills it with the pages it wrote
 * (bodies, index entries), kept in the C heap; 2 MB costs a burst nothing in speed and keeps
 * far less memory after it (docs/contributing/benchmarks.md, "The store's page cache and memory
 * map"). Reads go through the memory map (MMAP_BYTES) instead, whose pages are the OS page
 * cache's, and the quiet-time unmap hands them back.
 */
const CACHE_KIB = 2048;

/**
 * How long a connection waits for a lock another connection holds (another process on the same
 * data folder writing, a checkpoint) before SQLITE_BUSY: every write begins IMMEDIATE, so it
 * waits here for the one write lock (docs/design.md, "Several processes: wake-ups and exactness").
 */
const BUSY_TIMEOUT_MS = 5000;

/**
 * A connection through the addon the caller gave (the single executable's), else node_modules',
 * with the page cache every connection of this process keeps (CACHE_KIB) and the wait for
 * another's lock (BUSY_TIMEOUT_MS).
 */
export const connect = (file: string, options: OpenOptions & { readonly?: boolean } = {}): Db => {
  const db = new Database(file, {
    readonly: options.readonly ?? false,
    ...(options.nativeBinding ? { nativeBinding: options.nativeBinding as never } : {}),
  });
  pragma(db, `cache_size = -${CACHE_KIB}`);
  pragma(db, `busy_timeout = ${BUSY_TIMEOUT_MS}`);
  return db;
};

/**
 * Reads through a memory map of the database file (https://sqlite.org/mmap.html) up to this
 * size, SQLite's largest: a page already in the OS page cache is read without a system call
 * or a copy into the connection's own page cache (CACHE_KIB). An IMAP sync or SEARCH TEXT over a folder
 * of 10,000 messages reads about 100 MB of pages, which that cache cannot hold, and each miss
 * was a pread, which made both about twice as slow (docs/contributing/benchmarks.md). Pages
 * of the map count in the process's RSS as file pages, which the kernel can drop at need.
 * Writes still go through the WAL.
 */
export const MMAP_BYTES = 0x7fff0000;

/** Reads through a map of the file from now on (MMAP_BYTES); the counterpart of stopMapping. */
export const startMapping = (db: Db): void => {
  pragma(db, `mmap_size = ${MMAP_BYTES}`);
};

/**
 * Unmaps the connection's map of the database file; SQLite maps it again at the next read.
 * Every page read through the map stays in the process's RSS (as file pages) until then, tens
 * of MB after a burst of mail (docs/contributing/benchmarks.md). The pages stay in the
 * OS page cache, so a read after this costs a page fault, not a disk read. SQLite unmaps only
 * between statements (no page of the map in use), which a caller outside any query is. It maps
 * again a connection that stopMapping left without a map. False where it cannot be now.
 */
export const unmapPages = (db: Db): boolean => {
  if (!stopMapping(db)) return false;
  startMapping(db);
  return true;
};

/**
 * Unmaps the connection's map and reads without one (each page a pread into its page cache)
 * until unmapPages maps it again; false where that cannot be now (inside a transaction) or
 * there is no map. For a burst of writes (Store.groupCommit): each page an insert reads
 * through the map (the path to a b-tree's last leaf, an index's leaf) also maps its neighbours
 * already in the OS page cache (the kernel's fault-around, 64 KB), which the WAL's checkpoints
 * have just written, so during a burst the map comes to hold a large part of every table,
 * though ingest reads none of it back (docs/contributing/benchmarks.md).
 */
export const stopMapping = (db: Db): boolean => {
  if (!db.open || db.memory || db.inTransaction) return false;
  pragma(db, 'mmap_size = 0');
  return true;
};

/**
 * WAL with synchronous=FULL: a commit is on disk before it returns, so an SMTP 250 sent
 * after a commit survives a crash (docs/design.md "Durability and correctness").
 */
export const openDatabase = (file: string, options: OpenOptions = {}): Db => {
  if (file !== ':memory:') mkdirSync(dirname(file), { recursive: true });
  const db = connect(file, options);
  pragma(db, 'journal_mode = WAL');
  pragma(db, 'synchronous = FULL');
  pragma(db, 'foreign_keys = ON');
  if (file !== ':memory:') startMapping(db);
  migrate(db);
  return db;
};

/**
 * Each migration is applied once and recorded by version in schema_migrations, so one that
 * lands after a higher-numbered one (parallel branches) is still applied to an existing
 * database. Databases from before this table existed recorded only a high-water mark in
 * user_version: every version up to it counts as applied.
 */
const migrate = (db: Db): void => {
  const applied = appliedVersions(db);
  const isApplied = keptStatement(db, 'SELECT 1 FROM schema_migrations WHERE version = ?');
  for (const migration of MIGRATIONS) {
    if (applied.has(migration.version)) continue;
    db.transaction(() => {
      // Another process on the same data folder may have applied it since the first look.
      if (isApplied.get(migration.version) !== undefined) return;
      db.exec(migration.sql);
      keptStatement(db, 'INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)').run(migration.version, migration.name, Date.now());
      const highest = Math.max(migration.version, pragma(db, 'user_version') as number);
      pragma(db, `user_version = ${highest}`);
    }).immediate();
  }
};

const appliedVersions = (db: Db): Set<number> => {
  const highWater = pragma(db, 'user_version') as number;
  db.exec('CREATE TABLE IF NOT EXISTS schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at INTEGER NOT NULL)');
  const rows = keptStatement(db, 'SELECT version FROM schema_migrations').all() as { version: number }[];
  if (rows.length > 0 || highWater === 0) return new Set(rows.map((row) => row.version));
  const legacy = MIGRATIONS.filter((migration) => migration.version <= highWater);
  const record = keptStatement(db, 'INSERT INTO schema_migrations (version, name, applied_at) VALUES (?, ?, ?)');
  db.transaction(() => legacy.forEach((migration) => record.run(migration.version, migration.name, Date.now()))).immediate();
  return new Set(legacy.map((migration) => migration.version));
};
