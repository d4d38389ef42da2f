/**
 * The body of the search worker (see search-writer.ts): the full-text index's one
 * writer, so tokenizing stored mail runs off the main event loop. Requests are done one at
 * a time, in order, each in its own durable transaction.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { releaseWhenQuiet } from '../runtime/memory-release.js';
import { SearchIndexFileWriter } from '../store/search-db.js';
import type { SearchReply, SearchRequest, SearchResult, SearchWorkerData } from './search-protocol.js';

const port = parentPort;
if (!port) throw new Error('search-thread runs only as a worker thread');
const data = workerData as SearchWorkerData;

/** The executable's addon, loaded again by file name: the process maps it once, so both threads share one SQLite. */
const loadAddon = (file: string): object => {
  const addon = { exports: {} };
  process.dlopen(addon, file);
  return addon.exports;
};

const writer = SearchIndexFileWriter.open(data.file, data.nativeBindingFile ? { nativeBinding: loadAddon(data.nativeBindingFile) } : {});

/** This thread's heap too is collected once a burst is over (memory-release.ts). */
const quiet = releaseWhenQuiet(10_000);
// Opening the index leaves garbage too: collected once the thread has been quiet as long.
quiet.touch();

const perform = (request: Exclude<SearchRequest, { type: 'close' }>): SearchResult => {
  try {
    if (request.type === 'index') writer.index(request.entries, request.through);
    else writer.trimAbove(request.rowId);
    return { id: request.id };
  } catch (error) {
    return { id: request.id, error: error instanceof Error ? error.message : String(error) };
  }
};

port.on('message', (requests: SearchRequest[]) => {
  quiet.touch();
  const results: SearchResult[] = [];
  for (const request of requests) {
    if (request.type === 'close') {
      if (results.length > 0) port.postMessage({ type: 'results', results } satisfies SearchReply);
      quiet.stop();
      writer.close();
      port.close();
      return;
    }
    results.push(perform(request));
  }
  port.postMessage({ type: 'results', results } satisfies SearchReply);
});

port.postMessage({ type: 'ready' } satisfies SearchReply);
