import type { Pool } from 'pg';
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
export const migratePostgres = async (pool: Pool, now: number = Date.now()): Promise<number[]> => {
  const client = await pool.connect();
  try {
    await client.query('BEGIN');
    await client.query('SELECT pg_advisory_xact_lock($1)', [MIGRATION_LOCK]);
    await client.query('CREATE TABLE IF NOT EXISTS schema_migrations (version BIGINT PRIMARY KEY, name TEXT NOT NULL, applied_at BIGINT NOT NULL)');
    const { rows } = await client.query<{ version: string }>('SELECT version FROM schema_migrations');
    const applied = new Set(rows.map((row) => Number(row.version)));
    const ran: number[] = [];
    for (const migration of POSTGRES_MIGRATIONS) {
      if (applied.has(migration.version)) continue;
      await client.query(migration.sql);
      await client.query('INSERT INTO schema_migrations (version, name, applied_at) VALUES ($1, $2, $3)', [migration.version, migration.name, now]);
      ran.push(migration.version);
    }
    await client.query('COMMIT');
    return ran;
  } catch (error) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw error;
  } finally {
    client.release();
  }
};
