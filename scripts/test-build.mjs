// The tests' JavaScript: scripts/run-tap.mjs runs tap on the test files bundled by esbuild,
// rather than on the sources through tsx. On Node 20 module hooks run on a loader thread, and
// each module a test loads costs a round trip to it: tsx's, and tap's own (its mock plugin's
// and processinfo's, which tap always adds). A test file's ~400 modules of src/ and test/ are
// ~35 chunks once bundled: some 1 s less CPU before its first test (4.1 s through tsx, 3.1 s).
//
// The bundle is made once per state of the sources (treeKey) under .build/test/<key>/ and
// shared by every run and test process until a source changes; a changed, added or removed
// file gives a new key, so a run never sees stale code. Each .ts file under test/ is an entry
// (test/x.test.ts becomes <tree>/test/x.test.js), and the code they share goes into chunks
// (splitting), so a module still exists once in a process. What a bundle keeps as imports:
//   - packages, resolved from the repository's node_modules at run time, as from source;
//   - a relative import of a script (`.mjs`): the real file, by its file URL.
// JSON imports are inlined (their files are in the key). Each module's import.meta.url,
// .dirname and .filename are the source file's own, so that what a module reads or starts
// relative to itself (fixtures, schema, bin/agentpost, the *-source.ts thread starters) is
// the repository's, as under tsx. Each file is compiled with tsx's options (target this Node,
// tsconfig.json, keepNames, whitespace minified) and the bundle carries an inline source map
// without the sources, so stack traces name the .ts files and their lines.
import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { cachedDir, pruneUnused } from './cached-dir.mjs';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
/** The folders a bundle can read from: those tsconfig.json type-checks (src, bin, schema, test, bench, scripts). */
const FOLDERS = JSON.parse(readFileSync(join(root, 'tsconfig.json'), 'utf8')).include;
/** The files of theirs that esbuild may read (not, say, test/screenshots/, which tests write). */
const READ = /\.(ts|json|js|mjs|cjs)$/;
export const BUILD_DIR = join(root, '.build', 'test');
/**
 * Trees no run used for two hours go (when a new one is made): each is some 4 MB, and an edit
 * makes one. A run marks its tree as it starts, and a whole suite takes some 15 minutes.
 */
const UNUSED_MS = 2 * 60 * 60 * 1000;

const filesUnder = (dir) =>
  readdirSync(dir, { withFileTypes: true }).flatMap((item) => {
    const path = join(dir, item.name);
    return item.isDirectory() ? filesUnder(path) : [path];
  });

const isSource = (file) => file.endsWith('.ts') && !file.endsWith('.d.ts');
/** The files tap may be given: the test files, and the fixtures test/test-script.test.ts runs tap on. Not the helpers (as entries they would split the shared code into more chunks). */
const isEntry = (file) => isSource(file) && file.startsWith('test/') && !file.startsWith('test/helpers/');

/** The files esbuild may read, relative to the repository, sorted. */
const inputFiles = () =>
  [...FOLDERS.flatMap((folder) => filesUnder(join(root, folder))), join(root, 'package.json')]
    .map((file) => relative(root, file))
    .filter((file) => READ.test(file))
    .sort();

/**
 * What decides the tree: the path and contents of every file esbuild may read, esbuild's
 * version, this Node's version (the target) and this file. Some 30 ms.
 */
const treeKey = (files) => {
  const hash = createHash('sha256');
  for (const file of files) {
    const text = readFileSync(join(root, file));
    hash.update(`${file}\0${text.length}\0`);
    hash.update(text);
  }
  hash.update(`${process.versions.node}\0`);
  hash.update(readFileSync(join(root, 'node_modules', 'esbuild', 'package.json')));
  hash.update(readFileSync(fileURLToPath(import.meta.url)));
  return hash.digest('hex').slice(0, 16);
};

/** tsx's options for one file, with the file's own import.meta. */
const transformOptions = (tsconfigRaw, path) => ({
  loader: 'ts',
  format: 'esm',
  target: `node${process.versions.node}`,
  tsconfigRaw,
  sourcefile: path,
  sourcemap: 'inline',
  sourcesContent: false,
  keepNames: true,
  define: {
    'import.meta.url': JSON.stringify(pathToFileURL(path).href),
    'import.meta.dirname': JSON.stringify(dirname(path)),
    'import.meta.filename': JSON.stringify(path),
  },
});

/** Packages stay imports; a relative import of a file esbuild does not bundle (a script) becomes its file URL. */
const sourcesOnly = (esbuild, tsconfigRaw) => ({
  name: 'sources-only',
  setup(builder) {
    builder.onResolve({ filter: /.*/ }, (args) => {
      if (args.kind === 'entry-point') return undefined;
      if (!/^\.\.?\//.test(args.path)) return { external: true };
      const path = resolve(args.resolveDir, args.path);
      if (path.endsWith('.json') || (path.endsWith('.js') && existsSync(path.replace(/\.js$/, '.ts')))) return undefined;
      return { path: pathToFileURL(path).href, external: true };
    });
    builder.onLoad({ filter: /\.ts$/ }, async (args) => {
      const { code } = await esbuild.transform(readFileSync(args.path, 'utf8'), transformOptions(tsconfigRaw, args.path));
      return { contents: code, loader: 'js', resolveDir: dirname(args.path) };
    });
  },
});

const make = async (tree, files) => {
  const esbuild = await import('esbuild');
  const tsconfigRaw = readFileSync(join(root, 'tsconfig.json'), 'utf8');
  await esbuild.build({
    entryPoints: files.filter(isEntry).map((file) => join(root, file)),
    absWorkingDir: root,
    outbase: root,
    outdir: tree,
    bundle: true,
    splitting: true,
    format: 'esm',
    platform: 'node',
    target: `node${process.versions.node}`,
    sourcemap: 'inline',
    sourcesContent: false,
    keepNames: true,
    minifyWhitespace: true,
    plugins: [sourcesOnly(esbuild, tsconfigRaw)],
    logLevel: 'silent',
  });
};

/**
 * The tree for the sources as they are now (made if missing: some 2 s of CPU) and
 * `compiled(file)`, the bundle of a .ts file under test/ but not test/helpers/ (as given, relative to the working
 * folder or absolute; other paths are returned unchanged).
 */
export const testBuild = async () => {
  const files = inputFiles();
  const tree = join(BUILD_DIR, treeKey(files));
  await cachedDir(tree, async (making) => {
    pruneUnused(BUILD_DIR, UNUSED_MS, tree);
    await make(making, files);
  });
  const compiled = (file) => {
    const path = relative(root, resolve(file));
    return isEntry(path) ? relative(process.cwd(), join(tree, path.replace(/\.ts$/, '.js'))) : file;
  };
  return { tree, compiled };
};
