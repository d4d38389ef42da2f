// Runs the built CLI (dist/app/agentpost.js), building it first when a source is newer
// (scripts/build.mjs). `npm start` and bin/agentpost come here; production runs JavaScript.
import { pathToFileURL } from 'node:url';
import { ensureBuilt } from '../scripts/build.mjs';

const entry = await ensureBuilt((line) => process.stderr.write(`agentpost: ${line}\n`));
await import(pathToFileURL(entry).href);
