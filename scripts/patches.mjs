// patches/ (see patches/README.md) changes dependencies the service relies on; patch-package
// applies them after every install (scripts/postinstall.mjs), and `npm test` applies any that a
// node_modules folder copied or installed before a patch landed is missing. patch-package
// recognizes a patch already applied, so this only writes what is missing; a stamp with the
// patches' digest makes the check free when nothing changed. patch-package is a dependency,
// not a devDependency: production (`npm ci --omit=dev`) runs the patched code too.
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** Applies patches/ when the stamp says they are not; returns false when patch-package failed. */
export const ensurePatches = (root = '.') => {
  const dir = join(root, 'patches');
  const stamp = join(root, 'node_modules', '.agentpost-patches');
  const files = existsSync(dir)
    ? readdirSync(dir)
        .filter((name) => name.endsWith('.patch'))
        .sort()
    : [];
  const digest = createHash('sha256')
    .update(files.map((name) => readFileSync(join(dir, name), 'utf8')).join('\0'))
    .digest('hex');
  if (files.length === 0 || (existsSync(stamp) && readFileSync(stamp, 'utf8') === digest)) return true;
  const patched = spawnSync('npx', ['--no-install', 'patch-package', '--error-on-fail'], { cwd: root, stdio: 'inherit' });
  if (patched.status !== 0) return false;
  writeFileSync(stamp, digest);
  return true;
};
