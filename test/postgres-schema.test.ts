import { join } from 'node:path';
import postgres from 'postgres';
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
  const { sql } = await freshDatabase(t);
  t.same(await migratePostgres(sql), [88]);
  const expected = sqliteSchema(t);
  const tables = (
    await sql<{ name: string }[]>`SELECT table_name AS name FROM information_schema.tables WHERE table_schema = 'public' ORDER BY table_name`
  ).map((row) => row.name);
  t.same(tables, expected.tables, 'the same tables');
  const columns = (
    await sql<
      { name: string }[]
    >`SELECT table_name || '.' || column_name || ' ' || data_type AS name FROM information_schema.columns WHERE table_schema = 'public'`
  )
    .map((row) => row.name)
    .sort();
  t.same(columns, expected.columns, 'the same columns, of the same types');
  // Indexes made by CREATE INDEX; those PostgreSQL makes for a key or a UNIQUE constraint are SQLite's automatic ones.
  const indexes = (
    await sql<{ name: string }[]>`SELECT indexname AS name FROM pg_indexes i WHERE schemaname = 'public'
      AND NOT EXISTS (SELECT 1 FROM pg_constraint c WHERE c.conname = i.indexname) ORDER BY indexname`
  ).map((row) => row.name);
  t.same(indexes, expected.indexes, 'the same indexes');
  const triggers = (await sql<{ name: string }[]>`SELECT DISTINCT trigger_name AS name FROM information_schema.triggers ORDER BY trigger_name`).map(
    (row) => row.name,
  );
  t.same(triggers, expected.triggers, 'the same triggers');
  t.equal(POSTGRES_MIGRATIONS.at(-1)?.version, MIGRATIONS.at(-1)?.version, 'the newest PostgreSQL migration is the newest SQLite one');
});

t.test('nodes that start at once migrate once: the others wait for the lock and find it done', { skip: unavailable ?? false }, async (t) => {
  const { url } = await freshDatabase(t);
  const nodes = [0, 1, 2].map(() => postgres(url, { max: 1, onnotice: () => undefined }));
  t.teardown(() => Promise.all(nodes.map((node) => node.end())));
  const ran = await Promise.all(nodes.map((node) => migratePostgres(node)));
  t.same(ran.map((versions) => versions.length).sort(), [0, 0, 1], 'one node applied the baseline');
  t.same(await migratePostgres(nodes[0]), [], 'and nothing is left to apply');
  const [{ count }] = await nodes[1]<{ count: string }[]>`SELECT count(*) AS count FROM schema_migrations`;
  t.equal(Number(count), POSTGRES_MIGRATIONS.length);
});
