import { randomBytes } from 'node:crypto';
import pg from 'pg';
import type { Test } from 'tap';

/**
 * The project's machines have PostgreSQL on 127.0.0.1:5432 with trust authentication and a
 * database `test` (.ci/postgres starts or installs it); AGENTPOST_TEST_POSTGRES_URL names
 * another server. Each test gets a database of its own, dropped at its end.
 */
const SERVER_URL = process.env.AGENTPOST_TEST_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

/** Null when the server answers; otherwise why the tests that need it skip. */
export const postgresUnavailable = async (): Promise<string | null> => {
  const client = new pg.Client({ connectionString: SERVER_URL, connectionTimeoutMillis: 3000 });
  try {
    await client.connect();
    await client.query('SELECT 1');
    return null;
  } catch (error) {
    return `PostgreSQL does not answer at ${SERVER_URL.replace(/\/\/[^@]*@/, '//')}: ${error instanceof Error ? error.message : String(error)}`;
  } finally {
    await client.end().catch(() => undefined);
  }
};

/** A new empty database for this test: its URL, and a pool on it closed at teardown. */
export const freshDatabase = async (t: Test): Promise<{ url: string; pool: pg.Pool }> => {
  const name = `agentpost_test_${randomBytes(6).toString('hex')}`;
  const admin = new pg.Client({ connectionString: SERVER_URL });
  await admin.connect();
  await admin.query(`CREATE DATABASE ${name}`);
  const url = new URL(SERVER_URL);
  url.pathname = `/${name}`;
  const pool = new pg.Pool({ connectionString: url.toString(), max: 4 });
  t.teardown(async () => {
    await pool.end();
    // Dropped once the test's connections are gone (a pool's end does not wait for the server
    // to see them go): FORCE would end them with an error their clients raise after their end.
    for (let tries = 0; tries < 50; tries += 1) {
      const { rows } = await admin.query<{ count: string }>('SELECT count(*) AS count FROM pg_stat_activity WHERE datname = $1', [name]);
      if (Number(rows[0].count) === 0) break;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    await admin.query(`DROP DATABASE IF EXISTS ${name}`);
    await admin.end();
  });
  return { url: url.toString(), pool };
};
