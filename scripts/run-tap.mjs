// Runs tap with its usual report on stdout, saves the raw TAP beside it (--output-file), and
// closes with "N passed, N failed" counted from that raw TAP (scripts/tap-count.mjs). Exits 1
// exactly when the line says something failed. Arguments go to tap (e.g. test files).
// `npm test` calls this after the type check; test/test-script.test.ts runs it on fixtures.
//
// tap runs the tests as JavaScript compiled from src/, test/, bin/, ... (scripts/test-build.mjs),
// without tsx: a test file given as test/<name>.test.ts runs as its compiled file, and with no
// file given tap finds the compiled ones that package.json's "include" names (give files, not
// folders). The "tap" section
// of package.json, less its tsx import and with the include moved into the compiled tree, goes
// to tap as its config file (TAP_RCFILE), so `npx tap test/<name>.test.ts` keeps running the
// sources through tsx.
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { pathToFileURL } from 'node:url';
import { report } from './closing-line.mjs';
import { countTap } from './tap-count.mjs';
import { testBuild } from './test-build.mjs';

/** The node argument that loads tsx, which the compiled tests do without. */
const TSX_IMPORT = /^--(import|loader|experimental-loader)[= ]tsx(\/esm)?$/;

/** package.json's tap config for the compiled tree (JSON, which tap reads as the YAML it is). */
const tapConfigFor = (tree) => {
  const { tap = {} } = JSON.parse(readFileSync('package.json', 'utf8'));
  const config = { ...tap };
  const nodeArgs = (config['node-arg'] ?? []).filter((arg) => !TSX_IMPORT.test(arg));
  if (nodeArgs.length > 0) config['node-arg'] = nodeArgs;
  else delete config['node-arg'];
  const at = relative(process.cwd(), tree);
  if (config.include) config.include = config.include.map((pattern) => join(at, pattern.replace(/\.ts$/, '.js')));
  return config;
};

/** A failure's name with each test file of the compiled tree named by its source, as tsx runs named it. */
const sourceNames = (reason, tree) => {
  const at = relative(process.cwd(), tree).replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
  return reason.replace(new RegExp(`${at}/(\\S+?)\\.js\\b`, 'g'), '$1.ts');
};

/** tap's arguments with each test file (a .ts file under test/, not test/helpers/) replaced by its bundle. */
const compiledArgs = (args, compiled) => args.map((arg) => (!arg.startsWith('-') && arg.endsWith('.ts') && existsSync(arg) ? compiled(arg) : arg));

/** ESC [?25h and ESC [?25l: the terminal's "show cursor" and "hide cursor". */
const CURSOR_CODES = /\x1b\[\?25[hl]/g;
/** The start of a cursor code cut at a chunk's end: held back until the next chunk. */
const CUT_CODE = /\x1b(\[(\?(2(5)?)?)?)?$/;

/**
 * tap's reporter (ink) writes "show cursor" as it exits, with no newline after it. On a
 * terminal that is invisible; in a log (CI) it would be glued to the front of the closing
 * line, which then no longer reads "N passed, N failed". So when stdout is not a terminal,
 * the report passes through here without cursor codes, and the closing line starts a line.
 */
const forwardReport = (stream) => {
  let carry = '';
  let atLineStart = true;
  stream.setEncoding('utf8');
  stream.on('data', (chunk) => {
    const text = (carry + chunk).replace(CURSOR_CODES, '');
    carry = CUT_CODE.exec(text)?.[0] ?? '';
    const shown = text.slice(0, text.length - carry.length);
    if (shown.length === 0) return;
    process.stdout.write(shown);
    atLineStart = shown.endsWith('\n');
  });
  return { finish: () => atLineStart || process.stdout.write('\n') };
};

export const runTap = async (args) => {
  const dir = mkdtempSync(join(tmpdir(), 'agentpost-tap-'));
  const rawFile = join(dir, 'run.tap');
  try {
    let build;
    try {
      build = await testBuild();
    } catch (error) {
      return { passed: 0, failed: 1, skipped: 0, reasons: [`compiling the tests (scripts/test-build.mjs): ${error.message}`] };
    }
    const { tree, compiled } = build;
    const rcFile = join(dir, 'taprc');
    writeFileSync(rcFile, JSON.stringify(tapConfigFor(tree)));
    const code = await new Promise((resolve) => {
      const terminal = process.stdout.isTTY === true;
      const child = spawn('npx', ['tap', '--reporter=base', `--output-file=${rawFile}`, ...compiledArgs(args, compiled)], {
        stdio: ['ignore', terminal ? 'inherit' : 'pipe', 'inherit'],
        env: { ...process.env, FORCE_COLOR: '0', TAP_RCFILE: rcFile },
      });
      const report = terminal ? null : forwardReport(child.stdout);
      child.on('error', () => resolve(127));
      child.on('close', (status, signal) => {
        report?.finish();
        resolve(status ?? (signal ? 128 : 1));
      });
    });
    let raw = '';
    try {
      raw = readFileSync(rawFile, 'utf8');
    } catch {
      // tap died before writing anything: the exit code and "no test ran" speak for it.
    }
    const counts = countTap(raw, code);
    return { ...counts, reasons: counts.reasons.map((reason) => sourceNames(reason, tree)) };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
};

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  process.exit(report(await runTap(process.argv.slice(2))));
}
