/** Entry of the CLI from source through tsx (tests, benches); bin/agentpost runs the built JS. */
import { sourceAuthWorker } from '../src/workers/threads/auth-thread-source.js';
import { sourceParseWorker } from '../src/workers/threads/parse-thread-source.js';
import { sourceSearchWorker } from '../src/workers/threads/search-thread-source.js';
import { runAndExit } from './run.js';

runAndExit({ parseWorker: sourceParseWorker, searchWorker: sourceSearchWorker, authWorker: sourceAuthWorker });
