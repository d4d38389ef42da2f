// `npm test`: tap's plugin set, the dependency patches, the type check, lint and format, then every tap test,
// closing with one line "N passed, N failed" counted from tap's raw TAP (scripts/run-tap.mjs);
// the exit code is non-zero exactly when that line counts a failure. Arguments go to tap.
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { report } from './closing-line.mjs';
import { onPackagingNode, unlinkPackagingNode } from './node-link.mjs';

const stop = (reason) => process.exit(report({ passed: 0, failed: 1, skipped: 0, reasons: [reason] }));

if (onPackagingNode()) {
  unlinkPackagingNode();
  stop('npm ran this on the packaging Node through node_modules/.bin/node; the link is removed now, run npm test again');
}
// A node_modules folder from before package.json changed (a rebase, a pull) lacks packages.
const { dependencies = {}, devDependencies = {} } = JSON.parse(readFileSync('package.json', 'utf8'));
const missing = Object.keys({ ...dependencies, ...devDependencies }).filter((name) => !existsSync(join('node_modules', name, 'package.json')));
if (missing.length > 0) stop(`node_modules lacks ${missing.join(', ')}: run npm install (or npm ci)`);

const { ensurePatches } = await import('./patches.mjs');
const { ensureTapPlugins } = await import('./tap-plugins.mjs');
const { runTap } = await import('./run-tap.mjs');
if (!ensureTapPlugins()) stop('npx tap build (if node_modules/@tapjs/test/test-built is broken, npm ci restores it)');
if (!ensurePatches()) stop('patch-package (npm ci restores node_modules and applies patches/)');
if (spawnSync('npx', ['tsc', '--noEmit', '-p', '.'], { stdio: 'inherit' }).status !== 0) stop('type check (npx tsc --noEmit -p .)');
// Lint and format as biome.json says (Biome, pinned): `npx biome check --write .` fixes what it can.
if (spawnSync('npx', ['biome', 'ci', '.'], { stdio: 'inherit' }).status !== 0) stop('lint and format (npx biome ci .)');
// A unit of work that stays open across a turn of the event loop fails in the tests
// (src/store/unit.ts, ConnectionTurns); in production it is only reported.
process.env.AGENTPOST_STRICT_UNITS ??= '1';
process.exit(report(await runTap(process.argv.slice(2))));
