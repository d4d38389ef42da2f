// Runs after `npm ci` / `npm install` in this folder (package.json "postinstall"), so a fresh
// install needs no manual step: the dependency patches are applied, and `npx tap <file>` works
// at once.
import { ensurePatches } from './patches.mjs';
import { ensureTapPlugins } from './tap-plugins.mjs';

if (!ensurePatches()) {
  process.stderr.write('postinstall: patch-package failed to apply patches/\n');
  process.exit(1);
}
if (!ensureTapPlugins()) {
  process.stderr.write('postinstall: `npx tap build` failed; `npm test` will try again\n');
  process.exit(1);
}
