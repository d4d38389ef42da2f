// `npm test`: tap's plugin set, the dependency patches, the type check, then every tap test,
// closing with one line "N passed, N failed" counted from tap's raw TAP (scripts/run-tap.mjs);
// the exit code is non-zero exactly when that line counts a failure. Arguments go to tap.
import { spawnSync } from 'node:child_process';
import { ensurePatches } from './patches.mjs';
import { report, runTap } from './run-tap.mjs';
import { onPackagingNode, unlinkPackagingNode } from './node-link.mjs';
import { ensureTapPlugins } from './tap-plugins.mjs';

const stop = (reason) => process.exit(report({ passed: 0, failed: 1, skipped: 0, reasons: [reason] }));

if (onPackagingNode()) {
  unlinkPackagingNode();
  stop('npm ran this on the packaging Node through node_modules/.bin/node; the link is removed now, run npm test again');
}
if (!ensureTapPlugins()) stop('npx tap build (if node_modules/@tapjs/test/test-built is broken, npm ci restores it)');
if (!ensurePatches()) stop('patch-package (npm ci restores node_modules and applies patches/)');
if (spawnSync('npx', ['tsc', '--noEmit', '-p', '.'], { stdio: 'inherit' }).status !== 0) stop('type check (npx tsc --noEmit -p .)');
process.exit(report(await runTap(process.argv.slice(2))));
