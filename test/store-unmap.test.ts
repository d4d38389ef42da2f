import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import t, { type Test } from 'tap';
import { type Db, MMAP_BYTES, openDatabase, openReader, unmapPages } from '../src/store/db.js';
import { MappedReadRepo } from '../src/store/repo.js';

/**
 * The memory maps of the database file (store/db.ts): the writer has none, so what its inserts
 * read never joins this process's RSS; a reader reads through one, unmapPages hands its pages
 * back, and MappedReadRepo reads through the reader outside a write transaction only.
 */

/** KB of this process's RSS in mappings of `file` (Linux), or null where there is no smaps. */
const mappedKb = (file: string): number | null => {
  if (!existsSync('/proc/self/smaps')) return null;
  let inFile = false;
  let kb = 0;
  for (const line of readFileSync('/proc/self/smaps', 'utf8').split('\n')) {
    if (/^[0-9a-f]+-[0-9a-f]+ /.test(line)) inFile = line.endsWith(` ${file}`);
    else if (inFile && line.startsWith('Rss:')) kb += Number(/(\d+)/.exec(line)?.[1] ?? 0);
  }
  return kb;
};

const BLOBS = 256;
const BLOB_BYTES = 16 * 1024;

/** A writer on a new file holding BLOBS rows of BLOB_BYTES, with the WAL checkpointed into the file. */
const filledWriter = (t: Test, name: string): { file: string; writer: Db } => {
  const file = join(t.testdir(), name);
  const writer = openDatabase(file);
  t.teardown(() => writer.close());
  writer.exec('CREATE TABLE blobs (id INTEGER PRIMARY KEY, body BLOB NOT NULL)');
  const insert = writer.prepare('INSERT INTO blobs (body) VALUES (?)');
  writer.transaction(() => {
    for (let i = 0; i < BLOBS; i += 1) insert.run(Buffer.alloc(BLOB_BYTES, i));
  })();
  writer.pragma('wal_checkpoint(TRUNCATE)');
  return { file, writer };
};

const SUM = 'SELECT sum(length(body)) FROM blobs';

t.test('the writer reads without a map: none of the file joins the RSS', async (t) => {
  const { file, writer } = filledWriter(t, 'writer.db');
  t.equal(writer.pragma('mmap_size', { simple: true }), 0, 'no map');
  t.equal(writer.prepare(SUM).pluck().get(), BLOBS * BLOB_BYTES, 'it reads every row');
  writer.prepare('INSERT INTO blobs (body) VALUES (?)').run(Buffer.alloc(BLOB_BYTES, 1));
  const kb = mappedKb(file);
  if (kb !== null) t.equal(kb, 0, 'nothing of the file is resident in this process');
});

t.test('a reader maps pages; unmapPages hands them back and reads go on through the map', async (t) => {
  const { file } = filledWriter(t, 'reader.db');
  const reader = openReader(file);
  t.teardown(() => reader.close());
  const sum = reader.prepare(SUM).pluck();

  t.equal(sum.get(), BLOBS * BLOB_BYTES);
  const before = mappedKb(file);
  if (before !== null) t.ok(before >= 1024, `the read mapped ${before} KB`);

  unmapPages(reader);
  const after = mappedKb(file);
  if (after !== null) t.equal(after, 0, 'nothing of the file is resident in this process');
  t.equal(reader.pragma('mmap_size', { simple: true }), MMAP_BYTES, 'the map size is the same');

  t.equal(sum.get(), BLOBS * BLOB_BYTES, 'a read after it sees every row');
  const again = mappedKb(file);
  if (again !== null) t.ok(again >= 1024, 'and reads through the map again');
});

class Blobs extends MappedReadRepo {
  count(): number {
    return this.mappedRead('SELECT count(*) FROM blobs').pluck().get() as number;
  }
}

t.test('a MappedReadRepo reads through the reader outside a transaction, through the writer inside one', async (t) => {
  const { file, writer } = filledWriter(t, 'repo.db');
  const reader = openReader(file);
  t.teardown(() => reader.close());
  const blobs = new Blobs(writer, reader);
  const insert = writer.prepare('INSERT INTO blobs (body) VALUES (?)');

  t.equal(blobs.count(), BLOBS);
  const mapped = mappedKb(file);
  if (mapped !== null) t.ok(mapped > 0, 'the count read through the map');
  insert.run(Buffer.alloc(16, 0));
  t.equal(blobs.count(), BLOBS + 1, "outside a transaction it sees the writer's last commit");

  const inside = writer.transaction(() => {
    insert.run(Buffer.alloc(16, 0));
    return blobs.count();
  });
  t.equal(inside(), BLOBS + 2, 'inside one it sees what the transaction wrote');
  const rolledBack = writer.transaction(() => {
    insert.run(Buffer.alloc(16, 0));
    t.equal(blobs.count(), BLOBS + 3);
    throw new Error('roll back');
  });
  t.throws(() => rolledBack());
  t.equal(blobs.count(), BLOBS + 2, 'and outside again, only what was committed');
});

t.test('unmapPages leaves a connection alone inside a transaction, and an in-memory one', async (t) => {
  const memory = openDatabase(':memory:');
  t.teardown(() => memory.close());
  t.doesNotThrow(() => unmapPages(memory), 'an in-memory database has no map to hand back');
  t.equal(memory.prepare('SELECT 1').pluck().get(), 1);

  const { file } = filledWriter(t, 'busy.db');
  const reader = openReader(file);
  t.teardown(() => reader.close());
  reader.transaction(() => {
    unmapPages(reader);
    t.equal(reader.pragma('mmap_size', { simple: true }), MMAP_BYTES);
  })();
});
