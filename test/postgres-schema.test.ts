import { join } from 'node:path';
import pg from 'pg';
import t, { type Test } from 'tap';
import { MIGRATIONS } from '../src/store/migrations/index.js';
import { Store } from '../src/store/index.js';
import { migratePostgres, POSTGRES_MIGRATIONS } from '../src/store/postgres/migrate.js';
import { freshDatabase, postgresUnavailable } from './helpers/postgres.js';

/**
 * src/store/postgres/: the PostgreSQL schema is SQLite's, table for table and column for column,
 * and nodes that start at once migrate it once.
 */

const unavailable = await postgresUnavailable();
if (unavailable) t.comment(`skipped: ${unavailable}`);

/** SQLite's declared type as PostgreSQL names it (src/store/postgres/baseline.ts). */
const POSTGRES_TYPE: Record<string, string> = { INTEGER: 'bigint', TEXT: 'text', BLOB: 'bytea', REAL: 'double precision' };

const sqliteSchema = (t: Test) => {
  const store = Store.open(join(t.testdir({}), 'agentpost.db'));
  t.teardown(() => store.close());
  const tables = store.db.prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' ORDER BY name").pluck().all() as string[];
  const columns = tables.flatMap((table) =>
    (store.db.prepare(`SELECT name, type FROM pragma_table_info(?)`).all(table) as { name: string; type: string }[]).map(
      (column) => `${table}.${column.name} ${POSTGRES_TYPE[column.type] ?? column.type}`,
    ),
  );
  const named = (type: string) =>
    store.db.prepare('SELECT name FROM sqlite_master WHERE type = ? AND sql IS NOT NULL ORDER BY name').pluck().all(type) as string[];
  return { tables, columns: columns.sort(), indexes: named('index'), triggers: named('trigger') };
};

t.test('the PostgreSQL schema has every table, column, index and trigger of SQLite, in step with its migrations', { skip: unavailable ?? false }, async (t) => {
  const { pool } = await freshDatabase(t);
  t.same(await migratePostgres(pool), [88]);
  const names = async (text: string) => (await pool.query<{ name: string }>(text)).rows.map((row) => row.name);
  const expected = sqliteSchema(t);
  t.same(
    await names("SELECT table_name AS name FROM information_schema.tables WHERE table_schema = 'public' ORDER BY table_name"),
    expected.tables,
    'the same tables',
  );
  const columns = await names(
    "SELECT table_name || '.' || column_name || ' ' || data_type AS name FROM information_schema.columns WHERE table_schema = 'public'",
  );
  t.same(columns.sort(), expected.columns, 'the same columns, of the same types');
  // Indexes made by CREATE INDEX; those PostgreSQL makes for a key or a UNIQUE constraint are SQLite's automatic ones.
  const indexes = await names(`SELECT indexname AS name FROM pg_indexes i WHERE schemaname = 'public'
    AND NOT EXISTS (SELECT 1 FROM pg_constraint c WHERE c.conname = i.indexname) ORDER BY indexname`);
  t.same(indexes, expected.indexes, 'the same indexes');
  const triggers = await names('SELECT DISTINCT trigger_name AS name FROM information_schema.triggers ORDER BY trigger_name');
  t.same(triggers, expected.triggers, 'the same triggers');
  t.equal(POSTGRES_MIGRATIONS.at(-1)?.version, MIGRATIONS.at(-1)?.version, 'the newest PostgreSQL migration is the newest SQLite one');
});

t.test('nodes that start at once migrate once: the others wait for the lock and find it done', { skip: unavailable ?? false }, async (t) => {
  const { url } = await freshDatabase(t);
  // Three nodes, each with its own pool and connection.
  const nodes = [0, 1, 2].map(() => new pg.Pool({ connectionString: url, max: 1 }));
  const ran = await Promise.all(nodes.map((node) => migratePostgres(node)));
  t.same(ran.map((versions) => versions.length).sort(), [0, 0, 1], 'one node applied the baseline');
  t.same(await migratePostgres(nodes[0]), [], 'and nothing is left to apply');
  const { rows } = await nodes[1].query<{ count: string }>('SELECT count(*) AS count FROM schema_migrations');
  const [{ count }] = rows;
  t.equal(Number(count), POSTGRES_MIGRATIONS.length);
  // Closed here, before freshDatabase's teardown drops the database under them.
  await Promise.all(nodes.map((node) => node.end()));
});
