// scripts/run-tap.mjs (the last step of `npm test`) on small fixture files: its closing line
// "N passed, N failed" is counted from tap's raw TAP and always agrees with its exit code.
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import t from 'tap';
import { closingLine } from '../scripts/closing-line.mjs';
import { countTap } from '../scripts/tap-count.mjs';
import { runCommand } from './helpers/process.js';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const fixture = (name: string) => join('test', 'fixtures', 'test-script', `${name}.ts`);

/** This test runs under tap: its TAP_* variables would make the inner tap a child reporter. */
const cleanEnv = Object.fromEntries(Object.entries(process.env).filter(([name]) => !/^(TAP|_TAPJS)/.test(name)));

const runTap = (...files: string[]) => runIn(cleanEnv, ...files);
const runIn = (env: NodeJS.ProcessEnv, ...files: string[]) =>
  runCommand(process.execPath, [join(root, 'scripts', 'run-tap.mjs'), ...files], { cwd: root, env });

// Each case starts a whole tap run (the test build, plugins): generous for a loaded 2-core machine.
t.setTimeout(600_000);

// The four runs share nothing (each has its own fixture files and tap output file), so they
// start together here and each case below checks its own: one after another they took ~35 s,
// mostly a tap process starting up.
const runs = {
  green: runTap(fixture('green'), fixture('skip-todo')),
  ci: runIn({ ...cleanEnv, CI: 'true' }, fixture('green')),
  failing: runTap(fixture('failing')),
  crash: runTap(fixture('crash')),
};

const lastLine = (stdout: string) => stdout.trimEnd().split('\n').pop();
/** What the inner run printed, shown when an assertion on it fails. */
const printed = (result: { stdout: string; stderr: string }) => ({ stdout: result.stdout, stderr: result.stderr.slice(-4000) });

t.test('green files, one with a skip and a todo: all passed, the skip and the todo skipped, exit 0', async (t) => {
  const result = await runs.green;
  t.equal(lastLine(result.stdout), '5 passed, 0 failed, 2 skipped', printed(result));
  t.equal(result.code, 0);
});

// With CI set, tap's reporter ends with a "show cursor" code and no newline: in a log it was
// glued to the front of the closing line.
t.test('under CI the closing line stands alone on its line, with no terminal codes in the log', async (t) => {
  const result = await runs.ci;
  t.equal(lastLine(result.stdout), '3 passed, 0 failed', printed(result));
  t.notMatch(result.stdout, /\x1b\[\?25[hl]/, 'no cursor codes');
  t.equal(result.code, 0);
});

t.test('a failing assertion: counted, named, exit 1', async (t) => {
  const result = await runs.failing;
  t.equal(lastLine(result.stdout), '2 passed, 1 failed', printed(result));
  t.match(result.stdout, /failed: .*a subtest > arithmetic is wrong on purpose/);
  t.equal(result.code, 1);
});

t.test('a file whose process dies after passing assertions fails', async (t) => {
  const result = await runs.crash;
  t.equal(lastLine(result.stdout), '2 passed, 1 failed');
  t.match(result.stdout, /failed: .*crash\.ts \(exit code 3\)/);
  t.equal(result.code, 1);
});

t.test('the count from raw TAP, for what a fixture cannot easily make', async (t) => {
  const green = 'TAP version 14\n1..1\n# Subtest: a.ts\n    ok 1 - x\n    1..1\nok 1 - a.ts\n';
  t.same(countTap(green, 0), { passed: 1, failed: 0, skipped: 0, reasons: [] });
  t.match(countTap(green, 1), { passed: 1, failed: 1, reasons: ['tap exited with code 1'] }, 'a non-zero exit is never "0 failed"');
  t.match(countTap('', 0), { passed: 0, failed: 1, reasons: ['no test ran'] }, 'nothing ran');
  t.match(countTap('TAP version 14\n1..0\n', 0), { passed: 0, failed: 1, reasons: ['no test ran'] });
  t.match(countTap('TAP version 14\nok 1 - x\nBail out! database gone\n', 1), { passed: 1, failed: 1, reasons: ['bail out: database gone'] });
  t.match(countTap('TAP version 14\nok 1 - x\n1..3\n', 0), { passed: 1, failed: 1 }, 'a missed plan is a failure');
  const todoFailing = 'TAP version 14\nok 1 - x\n# Subtest: later\n    not ok 1 - y\n    1..1\nok 2 - later # TODO soon\n1..2\n';
  t.same(countTap(todoFailing, 0), { passed: 1, failed: 0, skipped: 1, reasons: [] }, 'a todo subtest counts once, as skipped');
  t.equal(closingLine({ passed: 3, failed: 0, skipped: 0 }), '3 passed, 0 failed');
  t.equal(closingLine({ passed: 3, failed: 1, skipped: 2 }), '3 passed, 1 failed, 2 skipped');
});
