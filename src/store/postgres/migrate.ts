import type { Sql } from 'postgres';
import { BASELINE } from './baseline.js';

/** One step of the PostgreSQL schema; versions follow SQLite's (src/store/migrations/), so the two stay in step. */
export interface PostgresMigration {
  version: number;
  name: string;
  sql: string;
}

export const POSTGRES_MIGRATIONS: readonly PostgresMigration[] = [{ version: 88, name: 'baseline: the schema of SQLite migration 88', sql: BASELINE }];

/** The key of the advisory lock every node takes to migrate: nodes that start at once migrate one after another. */
const MIGRATION_LOCK = 0x61_70_6f_73; // "apos"

/**
 * Brings the database to the newest schema, in one transaction under a transaction-scoped
 * advisory lock (https://www.postgresql.org/docs/15/explicit-locking.html#ADVISORY-LOCKS):
 * PostgreSQL's DDL is transactional, so a node that dies half-way leaves nothing half-made, and
 * a node that waited for the lock finds the work done. Returns the versions this call applied.
 */
export const migratePostgres = (sql: Sql, now: number = Date.now()): Promise<number[]> =>
  sql.begin(async (tx) => {
    await tx`SELECT pg_advisory_xact_lock(${MIGRATION_LOCK})`;
    await tx`CREATE TABLE IF NOT EXISTS schema_migrations (version BIGINT PRIMARY KEY, name TEXT NOT NULL, applied_at BIGINT NOT NULL)`;
    const applied = new Set((await tx<{ version: string }[]>`SELECT version FROM schema_migrations`).map((row) => Number(row.version)));
    const ran: number[] = [];
    for (const migration of POSTGRES_MIGRATIONS) {
      if (applied.has(migration.version)) continue;
      await tx.unsafe(migration.sql);
      await tx`INSERT INTO schema_migrations (version, name, applied_at) VALUES (${migration.version}, ${migration.name}, ${now})`;
      ran.push(migration.version);
    }
    return ran;
  });
