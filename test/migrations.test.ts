import Database from 'better-sqlite3';
import t from 'tap';
import { join } from 'node:path';
import { openDatabase } from '../src/store/db.js';
import { MIGRATIONS } from '../src/store/migrations/index.js';

const tableNames = (db: Database.Database): string[] =>
  (db.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").all() as { name: string }[]).map((row) => row.name);

const recorded = (db: Database.Database): number[] =>
  (db.prepare('SELECT version FROM schema_migrations ORDER BY version').all() as { version: number }[]).map((row) => row.version);

const allVersions = MIGRATIONS.map((migration) => migration.version);

/** Applies and records every migration below `version`, as a database from before it has them. */
const appliedBefore = (raw: Database.Database, version: number): void => {
  raw.exec('CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at INTEGER NOT NULL)');
  for (const migration of MIGRATIONS.filter((item) => item.version < version)) {
    raw.exec(migration.sql);
    raw.prepare('INSERT INTO schema_migrations VALUES (?, ?, 0)').run(migration.version, migration.name);
  }
};

t.test('versions are increasing in MIGRATIONS', async (t) => {
  t.same(
    [...allVersions].sort((a, b) => a - b),
    allVersions,
  );
  t.equal(new Set(allVersions).size, allVersions.length);
});

t.test('a fresh database gets every migration, each recorded', async (t) => {
  const db = openDatabase(join(t.testdir({}), 'fresh.db'));
  t.same(recorded(db), allVersions);
  t.equal(db.pragma('user_version', { simple: true }), Math.max(...allVersions));
  db.close();
});

t.test('a migration that landed after a higher-numbered one is still applied', async (t) => {
  const file = join(t.testdir({}), 'gap.db');
  const third = MIGRATIONS[2];
  const raw = new Database(file);
  raw.exec('CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, applied_at INTEGER NOT NULL)');
  for (const migration of MIGRATIONS.filter((item) => item !== third)) {
    raw.exec(migration.sql);
    raw.prepare('INSERT INTO schema_migrations VALUES (?, ?, 0)').run(migration.version, migration.name);
  }
  raw.close();
  const db = openDatabase(file);
  t.same(recorded(db), allVersions, `migration ${third.version} was applied late`);
  db.close();
});

t.test('a database from before schema_migrations counts versions up to user_version as applied, once', async (t) => {
  const file = join(t.testdir({}), 'legacy.db');
  const raw = new Database(file);
  raw.exec(MIGRATIONS[0].sql);
  raw.pragma(`user_version = ${MIGRATIONS[0].version}`);
  raw.close();
  const db = openDatabase(file);
  t.same(recorded(db), allVersions);
  t.ok(tableNames(db).includes('submissions'), 'later migrations ran');
  db.close();
  const again = openDatabase(file);
  t.same(recorded(again), allVersions, 'reopening applies nothing twice');
  again.close();
});

t.test('migration 52 (the event log) keeps webhook events and their attempts, and lets an event have no endpoint', async (t) => {
  const file = join(t.testdir({}), 'events.db');
  const raw = new Database(file);
  raw.pragma('foreign_keys = ON');
  appliedBefore(raw, 52);
  raw.exec(`INSERT INTO accounts (id, agent_id, email, created_at) VALUES ('a1', 'x', 'x@agents.localhost', 0);
    INSERT INTO webhook_endpoints (id, account_id, url, events_json, signing_secret, status, created_at) VALUES ('w1', 'a1', 'https://x.example', '[]', 's', 'verified', 0);
    INSERT INTO webhook_events (id, account_id, endpoint_id, type, body, status, created_at) VALUES ('e1', 'a1', 'w1', 'message.received', '{}', 'delivered', 1);
    INSERT INTO webhook_attempts (event_seq, replay, at, duration_ms, http_status) VALUES (1, 0, 2, 5, 200);`);
  raw.close();
  const db = openDatabase(file);
  t.same(db.prepare('SELECT id, endpoint_id AS endpoint, status FROM webhook_events').all(), [{ id: 'e1', endpoint: 'w1', status: 'delivered' }]);
  t.same(db.prepare('SELECT event_seq AS seq, http_status AS status FROM webhook_attempts').all(), [{ seq: 1, status: 200 }]);
  db.prepare(
    "INSERT INTO webhook_events (id, account_id, endpoint_id, type, body, status, created_at) VALUES ('e2', 'a1', NULL, 'message.received', '{}', NULL, 3)",
  ).run();
  t.throws(
    () =>
      db
        .prepare("INSERT INTO webhook_events (id, account_id, endpoint_id, type, body, status, created_at) VALUES ('e3', 'a1', NULL, 'x', '{}', 'pending', 3)")
        .run(),
    'no delivery status without an endpoint',
  );
  db.prepare('DELETE FROM webhook_events WHERE seq = 1').run();
  t.equal(db.prepare('SELECT count(*) FROM webhook_attempts').pluck().get(), 0, 'attempts still go with their event');
  t.same(db.pragma('foreign_key_check'), []);
});

t.test('migration 46 moves each stored ENVELOPE and BODYSTRUCTURE to message_wire and drops them from message_bodies', async (t) => {
  const file = join(t.testdir({}), 'wire.db');
  const raw = new Database(file);
  appliedBefore(raw, 46);
  // A message row with every NOT NULL column filled, its mailbox and folder left out.
  raw.pragma('foreign_keys = OFF');
  const required = (
    raw.prepare('PRAGMA table_info(messages)').all() as { name: string; type: string; notnull: number; dflt_value: unknown; pk: number }[]
  ).filter((column) => column.notnull === 1 && column.dflt_value === null && column.pk === 0);
  raw
    .prepare(`INSERT INTO messages (id, ${required.map((column) => column.name).join(', ')}) VALUES (7, ${required.map(() => '?').join(', ')})`)
    .run(...required.map((column) => (/INT/i.test(column.type) ? 1 : 'x')));
  raw
    .prepare(`INSERT INTO message_bodies (message_rowid, version, text, html, content_json, structure_json, envelope_wire, structure_wire)
    VALUES (7, 2, 'text', NULL, '{}', '{}', ?, ?)`)
    .run(Buffer.from('(NIL "s" NIL NIL NIL NIL NIL NIL NIL NIL)'), Buffer.from('("TEXT" "PLAIN" NIL NIL NIL "7BIT" 1 1 NIL NIL NIL NIL)'));
  raw.close();
  const db = openDatabase(file);
  t.same(db.prepare('SELECT message_rowid, version, CAST(envelope AS TEXT) AS envelope FROM message_wire').all(), [
    { message_rowid: 7, version: 2, envelope: '(NIL "s" NIL NIL NIL NIL NIL NIL NIL NIL)' },
  ]);
  const columns = (db.prepare('PRAGMA table_info(message_bodies)').all() as { name: string }[]).map((column) => column.name);
  t.notOk(columns.includes('envelope_wire') || columns.includes('structure_wire'), 'the body rows no longer carry them');
  t.equal((db.prepare('SELECT text FROM message_bodies WHERE message_rowid = 7').get() as { text: string }).text, 'text', 'the rest of the body row stays');
  db.close();
});

t.test('migration 72 samples every 4,096th message of each folder with the count of messages below its UID', async (t) => {
  const file = join(t.testdir({}), 'ranks.db');
  const raw = new Database(file);
  appliedBefore(raw, 72);
  // Message rows with every NOT NULL column filled, their mailbox left out: folder 1
  // with 9,000 odd UIDs (gaps, as after expunges), folder 2 with 4,096 (one short of a sample).
  raw.pragma('foreign_keys = OFF');
  const required = (raw.prepare('PRAGMA table_info(messages)').all() as { name: string; type: string; notnull: number; dflt_value: unknown; pk: number }[])
    .filter((column) => column.notnull === 1 && column.dflt_value === null && column.pk === 0 && !['folder_id', 'uid'].includes(column.name))
    .map((column) => ({ name: column.name, value: /INT/i.test(column.type) ? 1 : 'x' }));
  const insert = raw.prepare(
    `INSERT INTO messages (folder_id, uid, ${required.map((column) => column.name).join(', ')}) VALUES (?, ?, ${required.map(() => '?').join(', ')})`,
  );
  raw.exec(`INSERT INTO folders (id, mailbox_id, name, uid_validity, created_at) VALUES (1, 'm', 'INBOX', 1, 0), (2, 'm', 'Sent', 1, 0)`);
  raw.transaction(() => {
    for (let i = 0; i < 9000; i += 1) insert.run(1, 2 * i + 1, ...required.map((column) => column.value));
    for (let i = 0; i < 4096; i += 1) insert.run(2, i + 1, ...required.map((column) => column.value));
  })();
  raw.close();
  const db = openDatabase(file);
  t.same(db.prepare('SELECT folder_id AS folder, uid, below FROM folder_rank_samples ORDER BY folder_id, uid').all(), [
    { folder: 1, uid: 2 * 4096 + 1, below: 4096 },
    { folder: 1, uid: 2 * 8192 + 1, below: 8192 },
  ]);
  db.close();
});

t.test('migration 75 keeps outbox rows and webhook events with their ids and numbers new ones above every id and cursor', async (t) => {
  const file = join(t.testdir({}), 'monotonic.db');
  const raw = new Database(file);
  raw.pragma('foreign_keys = ON');
  appliedBefore(raw, 75);
  // A database whose outbox ids already started again: the cursor is above every row.
  raw.exec(`INSERT INTO outbox (id, topic, payload, created_at) VALUES (1, 'message.stored', '{}', 0), (2, 'message.stored', '{}', 0);
    INSERT INTO outbox_cursors (consumer, topic, last_id) VALUES ('webhooks', 'message.stored', 500);
    INSERT INTO accounts (id, agent_id, email, created_at) VALUES ('a1', 'x', 'x@agents.localhost', 0);
    INSERT INTO webhook_endpoints (id, account_id, url, events_json, signing_secret, status, created_at) VALUES ('w1', 'a1', 'https://x.example', '[]', 's', 'verified', 0);
    INSERT INTO webhook_events (seq, id, account_id, endpoint_id, type, body, status, created_at) VALUES (7, 'e7', 'a1', 'w1', 'message.received', '{}', 'delivered', 1);
    INSERT INTO webhook_attempts (event_seq, replay, at, duration_ms, http_status) VALUES (7, 0, 2, 5, 200);`);
  raw.close();
  const db = openDatabase(file);
  t.same(db.prepare('SELECT id FROM outbox ORDER BY id').pluck().all(), [1, 2], 'the rows stay');
  const outboxId = db.prepare("INSERT INTO outbox (topic, payload, created_at) VALUES ('message.stored', '{}', 1)").run().lastInsertRowid;
  t.equal(Number(outboxId), 501, 'above the highest cursor');
  t.same(db.prepare('SELECT event_seq AS seq, http_status AS status FROM webhook_attempts').all(), [{ seq: 7, status: 200 }]);
  db.prepare('DELETE FROM webhook_events').run();
  t.equal(db.prepare('SELECT count(*) FROM webhook_attempts').pluck().get(), 0, 'attempts still go with their event');
  const seq = db
    .prepare(
      "INSERT INTO webhook_events (id, account_id, endpoint_id, type, body, status, created_at) VALUES ('e8', 'a1', NULL, 'message.received', '{}', NULL, 3)",
    )
    .run().lastInsertRowid;
  t.equal(Number(seq), 8, 'the emptied log numbers on from its highest');
  t.same(db.pragma('foreign_key_check'), []);
  db.close();
});

t.test("migration 76 keeps idempotency records in the account's scope and lets another scope use the same key", async (t) => {
  const file = join(t.testdir({}), 'idempotency.db');
  const raw = new Database(file);
  appliedBefore(raw, 76);
  raw.exec(`INSERT INTO idempotency_records (account_id, idempotency_key, key_id, content_hash, submission_id, response_json, created_at)
    VALUES ('a1', 'k', 'key1', 'h', 's1', '{}', 5)`);
  raw.close();
  const db = openDatabase(file);
  t.same(db.prepare('SELECT account_id AS account, scope, idempotency_key AS key, submission_id AS submission FROM idempotency_records').all(), [
    { account: 'a1', scope: '', key: 'k', submission: 's1' },
  ]);
  db.prepare(
    "INSERT INTO idempotency_records (account_id, scope, idempotency_key, key_id, content_hash, submission_id, response_json, created_at) VALUES ('a1', 'sandbox:key2', 'k', 'key2', 'h', 's2', '{}', 6)",
  ).run();
  t.equal(db.prepare('SELECT count(*) FROM idempotency_records').pluck().get(), 2);
  db.close();
});
