import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import t from 'tap';
import { MMAP_BYTES, openDatabase, unmapPages } from '../src/store/db.js';
import { BURST_JOBS, Store } from '../src/store/index.js';

/**
 * unmapPages (store/db.ts): the pages a read brought into this process through SQLite's
 * memory map leave its RSS, and the connection goes on reading through a map. A burst of
 * group commits stops the writer's map (stopMapping) until then.
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

t.test('a read maps pages; unmapPages hands them back and reads go on through the map', async (t) => {
  const file = join(t.testdir(), 'unmap.db');
  const db = openDatabase(file);
  t.teardown(() => db.close());
  db.exec('CREATE TABLE blobs (id INTEGER PRIMARY KEY, body BLOB NOT NULL)');
  const insert = db.prepare('INSERT INTO blobs (body) VALUES (?)');
  db.transaction(() => {
    for (let i = 0; i < 256; i += 1) insert.run(Buffer.alloc(16 * 1024, i));
  })();
  const sum = db.prepare('SELECT sum(length(body)) FROM blobs').pluck();

  t.equal(sum.get(), 256 * 16 * 1024);
  const before = mappedKb(file);
  if (before !== null) t.ok(before >= 1024, `the read mapped ${before} KB`);

  unmapPages(db);
  const after = mappedKb(file);
  if (after !== null) t.equal(after, 0, 'nothing of the file is resident in this process');
  t.equal(db.pragma('mmap_size', { simple: true }), MMAP_BYTES, 'the map size is the same');

  t.equal(sum.get(), 256 * 16 * 1024, 'a read after it sees every row');
  const again = mappedKb(file);
  if (again !== null) t.ok(again >= 1024, 'and reads through the map again');
});

t.test('unmapPages leaves a connection alone inside a transaction, and an in-memory one', async (t) => {
  const memory = openDatabase(':memory:');
  t.teardown(() => memory.close());
  t.doesNotThrow(() => unmapPages(memory), 'an in-memory database has no map to hand back');
  t.equal(memory.prepare('SELECT 1').pluck().get(), 1);

  const db = openDatabase(join(t.testdir(), 'busy.db'));
  t.teardown(() => db.close());
  db.transaction(() => {
    unmapPages(db);
    t.equal(db.pragma('mmap_size', { simple: true }), MMAP_BYTES);
  })();
});

t.test('a burst of group commits leaves the writer without its map until the quiet-time unmap', async (t) => {
  const file = join(t.testdir(), 'burst.db');
  const store = Store.open(file);
  t.teardown(() => store.close());
  const mapSize = () => store.db.pragma('mmap_size', { simple: true });
  const messages = store.db.prepare('SELECT count(*) FROM messages').pluck();
  const jobs = (count: number) => Promise.all(Array.from({ length: count }, () => store.groupCommit(() => messages.get())));

  await jobs(BURST_JOBS - 1);
  t.equal(mapSize(), MMAP_BYTES, 'fewer jobs than a burst: the writer keeps its map');
  await jobs(1);
  t.equal(mapSize(), 0, 'a burst: the writer reads without it');
  t.same(await jobs(3), [0, 0, 0], 'and goes on reading');
  const resident = mappedKb(file);
  if (resident !== null) t.equal(resident, 0, 'nothing of the file is resident in this process');

  store.unmapPages();
  t.equal(mapSize(), MMAP_BYTES, 'once quiet it maps again');
  await jobs(BURST_JOBS - 1);
  t.equal(mapSize(), MMAP_BYTES, 'and the count starts over');
});
