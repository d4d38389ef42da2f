import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import Database from 'better-sqlite3';
import { MIGRATIONS } from './migrations/index.js';

export type Db = Database.Database;

export interface OpenOptions {
  /** The native addon, passed in by the single executable (see bin/sea-entry.ts). */
  nativeBinding?: object;
}

/**
 * WAL with synchronous=FULL: a commit is on disk before it returns, so an SMTP 250 sent
 * after a commit survives a crash (DESIGN.md durability rules).
 */
export const openDatabase = (file: string, options: OpenOptions = {}): Db => {
  if (file !== ':memory:') mkdirSync(dirname(file), { recursive: true });
  const db = new Database(file, options.nativeBinding ? { nativeBinding: options.nativeBinding as never } : {});
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = FULL');
  db.pragma('foreign_keys = ON');
  db.pragma('busy_timeout = 5000');
  migrate(db);
  return db;
};

const migrate = (db: Db): void => {
  const current = db.pragma('user_version', { simple: true }) as number;
  for (const migration of MIGRATIONS) {
    if (migration.version <= current) continue;
    db.transaction(() => {
      db.exec(migration.sql);
      db.pragma(`user_version = ${migration.version}`);
    }).immediate();
  }
};
