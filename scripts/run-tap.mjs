// Runs tap with its usual report on stdout, saves the raw TAP beside it (--output-file), and
// closes with "N passed, N failed" counted from that raw TAP (scripts/tap-count.mjs). Exits 1
// exactly when the line says something failed. Arguments go to tap (e.g. test files).
// `npm test` calls this after the type check; test/test-script.test.ts runs it on fixtures.
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { report } from './closing-line.mjs';
import { countTap } from './tap-count.mjs';

export const runTap = async (args) => {
  const dir = mkdtempSync(join(tmpdir(), 'agentpost-tap-'));
  const rawFile = join(dir, 'run.tap');
  try {
    const code = await new Promise((resolve) => {
      const child = spawn('npx', ['tap', '--reporter=base', `--output-file=${rawFile}`, ...args], {
        stdio: ['ignore', 'inherit', 'inherit'],
        env: { ...process.env, FORCE_COLOR: '0' },
      });
      child.on('error', () => resolve(127));
      child.on('close', (status, signal) => resolve(status ?? (signal ? 128 : 1)));
    });
    let raw = '';
    try {
      raw = readFileSync(rawFile, 'utf8');
    } catch {
      // tap died before writing anything: the exit code and "no test ran" speak for it.
    }
    return countTap(raw, code);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
};

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  process.exit(report(await runTap(process.argv.slice(2))));
}
