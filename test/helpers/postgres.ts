import { randomBytes } from 'node:crypto';
import postgres, { type Sql } from 'postgres';
import type { Test } from 'tap';

/**
 * The project's machines have PostgreSQL on 127.0.0.1:5432 with trust authentication and a
 * database `test` (.ci/postgres starts or installs it); AGENTPOST_TEST_POSTGRES_URL names
 * another server. Each test gets a database of its own, dropped at its end.
 */
const SERVER_URL = process.env.AGENTPOST_TEST_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432/test';

const quiet = { onnotice: () => undefined };

/** Whether the server answers; the reason when it does not. */
export const postgresUnavailable = async (): Promise<string | null> => {
  const admin = postgres(SERVER_URL, { ...quiet, max: 1, connect_timeout: 3 });
  try {
    await admin`SELECT 1`;
    return null;
  } catch (error) {
    return `PostgreSQL does not answer at ${SERVER_URL.replace(/\/\/[^@]*@/, '//')}: ${error instanceof Error ? error.message : String(error)}`;
  } finally {
    await admin.end();
  }
};

/** A new empty database for this test: its URL, and a connection to it closed at teardown. */
export const freshDatabase = async (t: Test): Promise<{ url: string; sql: Sql }> => {
  const name = `agentpost_test_${randomBytes(6).toString('hex')}`;
  const admin = postgres(SERVER_URL, { ...quiet, max: 1 });
  await admin.unsafe(`CREATE DATABASE ${name}`);
  const url = new URL(SERVER_URL);
  url.pathname = `/${name}`;
  const sql = postgres(url.toString(), { ...quiet, max: 4 });
  t.teardown(async () => {
    await sql.end();
    await admin.unsafe(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`);
    await admin.end();
  });
  return { url: url.toString(), sql };
};
