import { sourceParseWorker } from '../src/workers/threads/parse-thread-source.js';
import { sourceSearchWorker } from '../src/workers/threads/search-thread-source.js';
import { runCli } from './cli.js';

runCli(process.argv.slice(2), { parseWorker: sourceParseWorker, searchWorker: sourceSearchWorker }).then(
  (code) => process.exit(code),
  (error: unknown) => {
    process.stderr.write(`agentpost: ${error instanceof Error ? error.stack ?? error.message : String(error)}\n`);
    process.exit(1);
  },
);
