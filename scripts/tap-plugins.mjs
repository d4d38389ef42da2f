// tap compiles its plugin set into node_modules/@tapjs/test/test-built. The set a fresh
// `npm ci` unpacks is tap's default, which includes @tapjs/typescript; that plugin cannot work
// with TypeScript 7, so package.json's "tap.plugin" removes it and tests run through tsx.
// `npm ci` then runs scripts/postinstall.mjs, which builds the configured set, so `npx tap
// <file>` works at once; `npm test` checks again (cheap) in case node_modules was changed.
//
// It builds only when the built set differs from the configured one: a build deletes and
// rewrites files that every tap run imports, so a needless build would break test runs that
// share this node_modules while it works.
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';

const TEST_BUILT = join('node_modules', '@tapjs', 'test', 'test-built');
const BUILT_FILES = ['dist/esm/index.js', 'dist/commonjs/index.js', 'dist/esm/index.d.ts'];
const DEFAULTS = join('node_modules', '@tapjs', 'test', 'dist', 'esm', 'default-plugins.js');

const configuredPlugins = (root) => {
  const defaults = readFileSync(join(root, DEFAULTS), 'utf8')
    .match(/'[^']+'/g)
    .map((name) => name.slice(1, -1));
  const listed = JSON.parse(readFileSync(join(root, 'package.json'), 'utf8')).tap?.plugin ?? [];
  const removed = new Set(listed.filter((name) => name.startsWith('!')).map((name) => name.slice(1)));
  return new Set([...defaults, ...listed.filter((name) => !name.startsWith('!'))].filter((name) => !removed.has(name)));
};

const builtPlugins = (root) => {
  const index = readFileSync(join(root, TEST_BUILT, 'dist', 'esm', 'index.js'), 'utf8');
  return new Set([...index.matchAll(/import \* as Plugin_\w+ from "([^"]+)"/g)].map((match) => match[1]));
};

const sameSet = (a, b) => a.size === b.size && [...a].every((item) => b.has(item));

/** True when tap is installed and its built plugin set is not the configured one. */
export const tapNeedsBuild = (root = '.') => {
  if (!existsSync(join(root, DEFAULTS))) return false; // no tap here (npm ci --omit=dev)
  if (!BUILT_FILES.every((file) => existsSync(join(root, TEST_BUILT, file)))) return true;
  return !sameSet(configuredPlugins(root), builtPlugins(root));
};

/** Builds tap's plugin set when needed; returns false when a needed build failed. */
export const ensureTapPlugins = (root = '.') => {
  if (!tapNeedsBuild(root)) return true;
  process.stdout.write('building tap\'s plugin set from package.json ("tap.plugin")\n');
  const build = spawnSync('npx', ['tap', 'build'], { cwd: root, stdio: 'inherit' });
  return build.status === 0;
};
