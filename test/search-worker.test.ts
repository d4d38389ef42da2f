// The full-text index's writer on its own thread (src/workers/search-writer.ts, on the
// thread slot every worker thread uses): what it
// indexes a read-only connection finds; a search waits for it without blocking the event loop;
// a thread that dies fails its own requests, makes the next wait answer 503 once, and is replaced.
import { join } from 'node:path';
import { Worker } from 'node:worker_threads';
import { dyingWorker } from './helpers/workers.js';
import t, { type Test } from 'tap';
import { isAppError } from '../src/core/errors.js';
import { createLogger } from '../src/core/logger.js';
import type { IndexEntry } from '../src/core/search-index.js';
import { prepareSearchIndexFile, SearchIndexReader } from '../src/store/search-db.js';
import { sourceSearchWorker } from '../src/workers/search-worker-source.js';
import { SearchWriter, type SearchWorkerFactory } from '../src/workers/search-writer.js';

const silent = createLogger('silent', () => {});

const entry = (rowId: number, body: string): IndexEntry => ({ rowId, folderId: 1, text: { subject: '', participants: '', body } });

const indexFile = (t: Test): { file: string; reader: SearchIndexReader } => {
  const file = join(t.testdir({}), 'agentpost.search.db');
  prepareSearchIndexFile(file, {}, () => {});
  const reader = SearchIndexReader.open(file);
  t.teardown(() => reader.close());
  return { file, reader };
};

const isUnavailable = (error: unknown): boolean => isAppError(error) && error.code === 'unavailable';

const errorOf = (work: () => Promise<void>): Promise<unknown> =>
  work().then(
    () => undefined,
    (error: unknown) => error,
  );

/** A real thread that is ready, then answers each request only after `delayMs` (or never, for -1). */
const slowWorker =
  (delayMs: number): SearchWorkerFactory =>
  () =>
    new Worker(
      `const { parentPort } = require('node:worker_threads');
   parentPort.postMessage({ type: 'ready' });
   parentPort.on('message', (requests) => {
     for (const request of requests) {
       if (request.type === 'close') return process.exit(0);
       if (${delayMs} >= 0) setTimeout(() => parentPort.postMessage({ type: 'results', results: [{ id: request.id }] }), ${delayMs});
     }
   });`,
      { eval: true },
    );

t.test('entries the thread indexed are found; settle waits for what was sent; each entry replaces its row id', async (t) => {
  const { file, reader } = indexFile(t);
  const writer = new SearchWriter(file, sourceSearchWorker, silent);
  t.teardown(() => writer.close());
  await writer.start();
  const indexed = writer.index([entry(1, 'alpha beta'), entry(2, 'beta gamma')]);
  await writer.settle();
  t.equal(reader.count('beta'), 2, 'settle resolved after the thread committed');
  await indexed;
  await writer.index([entry(2, 'delta')]);
  t.same([reader.count('gamma'), reader.count('delta')], [0, 1], 'row 2 holds only its new text');
  await writer.trimAbove(1);
  t.same(reader.all('alpha OR delta'), [1], 'entries above row 1 are gone');
});

t.test('an idle thread closes the index and ends; the next request starts a new one', async (t) => {
  const { file, reader } = indexFile(t);
  let started = 0;
  const factory: SearchWorkerFactory = (data) => (started++, sourceSearchWorker(data));
  let idleExited = (): void => {};
  const writer = new SearchWriter(file, factory, silent, { idleMs: 50, onIdleExit: () => idleExited() });
  t.teardown(() => writer.close());
  await writer.start();
  await writer.index([entry(1, 'alpha')]);
  await new Promise<void>((resolve) => (idleExited = resolve));
  await writer.settle();
  t.equal(started, 1, 'a settle with nothing sent starts no thread');
  await writer.index([entry(2, 'alpha beta')]);
  await writer.settle();
  t.equal(started, 2, 'the next request started a new thread');
  t.equal(reader.count('alpha'), 2, 'what both threads indexed is found');
});

t.test('a total the reader keeps follows every commit the thread makes', async (t) => {
  const { file, reader } = indexFile(t);
  const writer = new SearchWriter(file, sourceSearchWorker, silent);
  t.teardown(() => writer.close());
  await writer.start();
  await writer.index([entry(1, 'kept word'), entry(2, 'kept')]);
  t.same(reader.page('kept', 1, 0), { total: 2, ids: [2] });
  t.same(reader.page('kept', 1, 1), { total: 2, ids: [1] }, 'the same count, another page');
  await writer.index([entry(3, 'kept')]);
  t.same(reader.page('kept', 1, 0), { total: 3, ids: [3] }, 'a new entry');
  await writer.index([entry(2, 'gone')]);
  t.same(reader.page('kept', 5, 0), { total: 2, ids: [3, 1] }, 'an entry replaced (a removal blanks it so)');
  await writer.trimAbove(1);
  t.same(reader.page('kept', 5, 5), { total: 1, ids: [] }, 'entries trimmed; an offset past the total reads no page');
  await writer.index([entry(10, 'kept'), entry(11, 'other')]);
  t.equal(reader.page('kept', 1, 0).total, 2, 'new entries above every counted one');
  await writer.index([entry(12, 'kept'), entry(13, 'kept')]);
  await writer.index([entry(14, 'other')]);
  t.equal(reader.page('kept', 1, 0).total, 4, 'two writes of new entries since');
  await writer.index([entry(5, 'kept'), entry(15, 'kept')]);
  t.equal(reader.page('kept', 1, 0).total, 6, 'an entry below the counted ones, written with one above');
  await writer.index([entry(12, 'other')]);
  t.equal(reader.page('kept', 1, 0).total, 5, 'an entry counted before, replaced');
});

t.test('a thread that dies fails its requests, the next settle answers 503 once, and a new thread takes over', async (t) => {
  const { file, reader } = indexFile(t);
  let started = 0;
  const factory: SearchWorkerFactory = (data) => (started++ === 0 ? dyingWorker() : sourceSearchWorker(data));
  const writer = new SearchWriter(file, factory, silent);
  t.teardown(() => writer.close());
  await writer.start();
  await t.rejects(writer.index([entry(1, 'lost')]), /exited with code 7/);
  t.ok(isUnavailable(await errorOf(() => writer.settle())), 'a search waiting for it answers 503');
  t.equal(await errorOf(() => writer.settle()), undefined, 'reported once');
  await writer.index([entry(1, 'again')]);
  t.equal(started, 2, 'a second thread');
  t.equal(reader.count('again'), 1);
});

t.test('after close, requests are refused', async (t) => {
  const { file } = indexFile(t);
  const writer = new SearchWriter(file, sourceSearchWorker, silent);
  await writer.start();
  await writer.close();
  t.ok(isUnavailable(await writer.index([entry(1, 'late')]).catch((error: unknown) => error)));
});

t.test('while a search waits for the thread, the event loop keeps serving others', async (t) => {
  const { file } = indexFile(t);
  const writer = new SearchWriter(file, slowWorker(300), silent);
  t.teardown(() => writer.close());
  await writer.start();
  const indexed = writer.index([entry(1, 'slow')]);
  let ticks = 0;
  const ticker = setInterval(() => (ticks += 1), 10);
  t.teardown(() => clearInterval(ticker));
  await writer.settle();
  clearInterval(ticker);
  await indexed;
  // A blocking wait would have held the loop for the whole delay: no timer could fire.
  t.ok(ticks > 0, `timers fired while the search waited (${ticks})`);
});

t.test('a thread that does not keep up makes a waiting search answer 503 after the timeout', async (t) => {
  const { file } = indexFile(t);
  const writer = new SearchWriter(file, slowWorker(-1), silent, { settleTimeoutMs: 200 });
  await writer.start();
  void writer.index([entry(1, 'never')]).catch(() => {});
  t.ok(isUnavailable(await errorOf(() => writer.settle())), '503 once the wait is over');
  await writer.close();
});
