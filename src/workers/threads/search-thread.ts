/**
 * The body of the search thread (see search-writer-thread.ts): the full-text index's one
 * writer, so tokenizing stored mail runs off the main event loop. Requests are done one at
 * a time, in order, each in its own durable transaction.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { SearchIndexFileWriter } from '../../store/search-db.js';
import { releaseWhenQuiet } from '../../runtime/memory-release.js';
import type { SearchReply, SearchRequest, SearchThreadData } from './search-protocol.js';

const port = parentPort;
if (!port) throw new Error('search-thread runs only as a worker thread');
const data = workerData as SearchThreadData;

/** The executable's addon, loaded again by file name: the process maps it once, so both threads share one SQLite. */
const loadAddon = (file: string): object => {
  const addon = { exports: {} };
  process.dlopen(addon, file);
  return addon.exports;
};

const writer = SearchIndexFileWriter.open(data.file, data.nativeBindingFile ? { nativeBinding: loadAddon(data.nativeBindingFile) } : {});

const perform = (request: Exclude<SearchRequest, { type: 'close' }>): void => {
  if (request.type === 'index') writer.index(request.entries, request.through);
  else writer.trimAbove(request.rowId);
};

/** This thread's heap too is collected once a burst is over (memory-release.ts). */
const quiet = releaseWhenQuiet(10_000);

// Opening the index leaves garbage too: collected once the thread has been quiet as long.
quiet.touch();

port.on('message', (request: SearchRequest) => {
  quiet.touch();
  if (request.type === 'close') {
    quiet.stop();
    writer.close();
    port.close();
    return;
  }
  let reply: SearchReply = { type: 'done', seq: request.seq };
  try {
    perform(request);
  } catch (error) {
    reply = { type: 'failed', seq: request.seq, error: error instanceof Error ? error.message : String(error) };
  }
  port.postMessage(reply);
});

port.postMessage({ type: 'ready' } satisfies SearchReply);
