// Builds the JavaScript that `npm start` and bin/agentpost run: esbuild bundles the CLI entry
// (bin/built-entry.ts) and the two worker threads (parse, search) from TypeScript into ES
// modules under dist/app/. npm packages stay imports, resolved from node_modules at run time;
// code shared by the entries goes into chunks, so the app still loads only for the commands
// that need it (bin/cli.ts). Production then runs plain JavaScript: no TypeScript loader, and
// nothing from devDependencies (esbuild is a dependency for this reason).
//
// `ensureBuilt()` builds only when a source the last build read is newer than that build (or
// gone). Two processes may start at once (tests do): a lock directory makes the second wait
// for the first's build, and every file is written to a temporary name and renamed into place.
//
// `node scripts/build.mjs` builds unconditionally.
import { mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
export const APP_DIR = join(root, 'dist', 'app');
export const APP_ENTRY = join(APP_DIR, 'agentpost.js');
const STAMP = join(APP_DIR, 'build.json');
const LOCK = join(root, 'dist', 'app.lock');
/** A lock older than this was left by a build that died. */
const STALE_LOCK_MS = 120_000;

const ENTRIES = {
  agentpost: join(root, 'bin', 'built-entry.ts'),
  'parse-worker': join(root, 'src', 'workers', 'parse-worker.ts'),
  'search-worker': join(root, 'src', 'workers', 'search-worker.ts'),
  'auth-worker': join(root, 'src', 'workers', 'auth-worker.ts'),
};

const mtimeOf = (file) => {
  try {
    return statSync(file).mtimeMs;
  } catch {
    return Number.POSITIVE_INFINITY; // gone: rebuild
  }
};

/** Why the last build is out of date, or undefined when it is current. */
export const staleReason = () => {
  let stamp;
  try {
    stamp = JSON.parse(readFileSync(STAMP, 'utf8'));
  } catch {
    return 'no build yet';
  }
  const builtAt = mtimeOf(STAMP);
  const newer = [fileURLToPath(import.meta.url), ...stamp.inputs.map((input) => join(root, input))].find((file) => mtimeOf(file) > builtAt);
  return newer ? `${relative(root, newer)} changed` : undefined;
};

export const build = async () => {
  const { build: esbuild } = await import('esbuild');
  const result = await esbuild({
    entryPoints: ENTRIES,
    outdir: APP_DIR,
    absWorkingDir: root,
    bundle: true,
    splitting: true,
    format: 'esm',
    platform: 'node',
    target: 'node20',
    packages: 'external',
    sourcemap: 'linked',
    legalComments: 'none',
    logLevel: 'warning',
    metafile: true,
    write: false,
  });
  mkdirSync(APP_DIR, { recursive: true });
  const written = new Set();
  for (const file of result.outputFiles) {
    writeAtomically(file.path, file.contents);
    written.add(file.path);
  }
  // Chunks of earlier builds are named by their content: drop the ones this build no longer has.
  for (const name of readdirSync(APP_DIR)) {
    const file = join(APP_DIR, name);
    if (!written.has(file) && file !== STAMP) rmSync(file, { force: true });
  }
  const inputs = Object.keys(result.metafile.inputs)
    .filter((input) => !input.startsWith('node_modules/'))
    .sort();
  writeAtomically(STAMP, `${JSON.stringify({ inputs }, null, 2)}\n`);
  return { files: written.size, inputs: inputs.length };
};

const writeAtomically = (file, contents) => {
  const temporary = `${file}.${process.pid}.tmp`;
  writeFileSync(temporary, contents);
  renameSync(temporary, file);
};

const sleep = (ms) => new Promise((done) => setTimeout(done, ms));

/** Holds the build lock while `work` runs; waits for another build that holds it. */
const withLock = async (work) => {
  mkdirSync(dirname(LOCK), { recursive: true });
  for (;;) {
    try {
      mkdirSync(LOCK);
      break;
    } catch (error) {
      if (error.code !== 'EEXIST') throw error;
      if (Date.now() - mtimeOf(LOCK) > STALE_LOCK_MS) rmSync(LOCK, { recursive: true, force: true });
      else await sleep(100);
    }
  }
  try {
    return await work();
  } finally {
    rmSync(LOCK, { recursive: true, force: true });
  }
};

/** Builds when the last build is out of date; `log` hears why. Returns the entry's path. */
export const ensureBuilt = async (log = () => {}) => {
  if (staleReason() === undefined) return APP_ENTRY;
  await withLock(async () => {
    const reason = staleReason(); // another process may have built it while this one waited
    if (reason === undefined) return;
    log(`building dist/app (${reason})`);
    await build();
  });
  return APP_ENTRY;
};

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const started = process.hrtime.bigint();
  const { files, inputs } = await withLock(build);
  const seconds = Number(process.hrtime.bigint() - started) / 1e9;
  process.stdout.write(`build: ${inputs} sources -> ${files} files in ${relative(root, APP_DIR)} in ${seconds.toFixed(1)} s\n`);
}
