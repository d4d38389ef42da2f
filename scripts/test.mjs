// `npm test`: type-check, then run every tap test, then print one closing line
// "N passed, N failed" so a run that executed no test is visible (README, CI).
import { spawn } from 'node:child_process';

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

const typecheck = await run('npx', ['tsc', '--noEmit', '-p', '.']);
if (typecheck.code !== 0) {
  process.stdout.write('typecheck failed\n0 passed, 1 failed\n');
  process.exit(1);
}

// tap compiles its plugin set into node_modules; a fresh `npm ci` has the default set, which
// includes @tapjs/typescript (it cannot work with TypeScript 7), so build the configured set.
const build = await run('npx', ['tap', 'build']);
if (build.code !== 0) {
  process.stdout.write('tap build failed\n0 passed, 1 failed\n');
  process.exit(1);
}

const tap = await run('npx', ['tap', '--reporter=base', ...process.argv.slice(2)]);
const summary = [...tap.tail.matchAll(/# \{ total: (\d+)(?:, pass: (\d+))?(?:, fail: (\d+))?(?:, skip: (\d+))?(?:, todo: (\d+))? \}/g)].pop();
const passed = Number(summary?.[2] ?? 0);
const failed = Number(summary?.[3] ?? 0) + (summary ? 0 : 1);
const skipped = Number(summary?.[4] ?? 0);
process.stdout.write(`${passed} passed, ${failed} failed${skipped ? `, ${skipped} skipped` : ''}\n`);
process.exit(tap.code !== 0 || failed > 0 || passed === 0 ? 1 : 0);
