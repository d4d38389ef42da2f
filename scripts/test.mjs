// `npm test`: type-check, then run every tap test, then print one closing line
// "N passed, N failed" so a run that executed no test is visible (README, CI).
import { spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';

const run = (command, args) =>
  new Promise((resolve) => {
    let tail = '';
    const child = spawn(command, args, { stdio: ['ignore', 'pipe', 'inherit'], env: { ...process.env, FORCE_COLOR: '0' } });
    child.stdout.on('data', (chunk) => {
      process.stdout.write(chunk);
      tail = (tail + chunk.toString()).slice(-4096);
    });
    child.on('close', (code) => resolve({ code: code ?? 1, tail }));
  });

// tap compiles its plugin set into node_modules/@tapjs/test/test-built; a fresh `npm ci` has
// the default set, which includes @tapjs/typescript (it cannot work with TypeScript 7), so
// build the configured set, but only when the built one differs: a build deletes and rewrites
// files that every tap run imports, so building on every run breaks test runs that share the
// node_modules folder (parallel worktrees) while it works.
const builtIndex = 'node_modules/@tapjs/test/test-built/dist/esm/index.js';
const builtFiles = [builtIndex, 'node_modules/@tapjs/test/test-built/dist/commonjs/index.js', 'node_modules/@tapjs/test/test-built/dist/esm/index.d.ts'];
const configuredPlugins = () => {
  const defaults = readFileSync('node_modules/@tapjs/test/dist/esm/default-plugins.js', 'utf8').match(/'[^']+'/g).map((name) => name.slice(1, -1));
  const listed = JSON.parse(readFileSync('package.json', 'utf8')).tap?.plugin ?? [];
  const removed = new Set(listed.filter((name) => name.startsWith('!')).map((name) => name.slice(1)));
  return new Set([...defaults, ...listed.filter((name) => !name.startsWith('!'))].filter((name) => !removed.has(name)));
};
const builtPlugins = () => new Set([...readFileSync(builtIndex, 'utf8').matchAll(/import \* as Plugin_\w+ from "([^"]+)"/g)].map((match) => match[1]));
const sameSet = (a, b) => a.size === b.size && [...a].every((item) => b.has(item));
if (!builtFiles.every((file) => existsSync(file)) || !sameSet(configuredPlugins(), builtPlugins())) {
  const build = await run('npx', ['tap', 'build']);
  if (build.code !== 0) {
    process.stdout.write('tap build failed (if node_modules/@tapjs/test/test-built is broken, npm ci restores it)\n0 passed, 1 failed\n');
    process.exit(1);
  }
}

// patches/ (applied by `npm install`'s postinstall) changes dependencies the tests rely on; a
// node_modules folder copied or installed before a patch landed gets it here. patch-package
// recognizes a patch already applied, so this only writes what is missing.
const patchStamp = 'node_modules/.agentpost-patches';
const patchFiles = existsSync('patches') ? readdirSync('patches').filter((name) => name.endsWith('.patch')).sort() : [];
const patchDigest = createHash('sha256').update(patchFiles.map((name) => readFileSync(`patches/${name}`, 'utf8')).join('\0')).digest('hex');
if (patchFiles.length > 0 && (!existsSync(patchStamp) || readFileSync(patchStamp, 'utf8') !== patchDigest)) {
  const patched = await run('npx', ['patch-package', '--error-on-fail']);
  if (patched.code !== 0) {
    process.stdout.write('patch-package failed (npm ci restores node_modules and applies patches/)\n0 passed, 1 failed\n');
    process.exit(1);
  }
  writeFileSync(patchStamp, patchDigest);
}

const typecheck = await run('npx', ['tsc', '--noEmit', '-p', '.']);
if (typecheck.code !== 0) {
  process.stdout.write('typecheck failed\n0 passed, 1 failed\n');
  process.exit(1);
}

const tap = await run('npx', ['tap', '--reporter=base', ...process.argv.slice(2)]);
const summary = [...tap.tail.matchAll(/# \{ total: (\d+)(?:, pass: (\d+))?(?:, fail: (\d+))?(?:, skip: (\d+))?(?:, todo: (\d+))? \}/g)].pop();
const passed = Number(summary?.[2] ?? 0);
const failed = Number(summary?.[3] ?? 0) + (summary ? 0 : 1);
const skipped = Number(summary?.[4] ?? 0);
process.stdout.write(`${passed} passed, ${failed} failed${skipped ? `, ${skipped} skipped` : ''}\n`);
process.exit(tap.code !== 0 || failed > 0 || passed === 0 ? 1 : 0);
