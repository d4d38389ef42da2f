// Runs after `npm ci` / `npm install` in this folder (package.json "postinstall", and
// "dependencies" after any install that changed node_modules), so a fresh install needs no
// manual step: scripts keep running on the machine's Node, the dependency patches are
// applied, and `npx tap <file>` works at once.
import { unlinkPackagingNode } from './node-link.mjs';
import { ensurePatches } from './patches.mjs';
import { ensureTapPlugins } from './tap-plugins.mjs';

if (unlinkPackagingNode()) process.stdout.write('postinstall: removed node_modules/.bin/node (the packaging Node; see scripts/node-link.mjs)\n');
if (!ensurePatches()) {
  process.stderr.write('postinstall: patch-package failed to apply patches/\n');
  process.exit(1);
}
if (!ensureTapPlugins()) {
  process.stderr.write('postinstall: `npx tap build` failed; `npm test` will try again\n');
  process.exit(1);
}
