/** Entry of the CLI from source through tsx (tests, benches); bin/agentpost runs the built JS. */
import { sourceAuthWorker } from '../src/workers/auth-worker-source.js';
import { sourceParseWorker } from '../src/workers/parse-worker-source.js';
import { sourceSearchWorker } from '../src/workers/search-worker-source.js';
import { runAndExit } from './run.js';

runAndExit({ parseWorker: sourceParseWorker, searchWorker: sourceSearchWorker, authWorker: sourceAuthWorker });
