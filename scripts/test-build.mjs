// The tests' JavaScript: scripts/run-tap.mjs runs tap on src/, test/, bin/, ... compiled by
// esbuild, one file to one file, rather than through tsx. On Node 20 tsx's module hooks run on
// a loader thread, and each of the ~400 modules a test loads cost a round trip to it: some
// 2.7 s of CPU per test file before its first test, and 0.5 s more to load tsx itself.
//
// The tree is made once per state of the sources (treeKey) under .build/test/<key>/ and shared
// by every run and test process until a source changes; a changed, added or removed file gives
// a new key, so a run never sees stale code. Inside it:
//   - the folders tsconfig.json includes (src/, test/, bin/, schema/, ...): each .ts compiled to .js beside where it sat (the same relative
//     imports, which already name `.js`), each other file a link to the real one;
//   - every other entry of the repository (package.json, schema/, scripts/, docs/, ...): a link
//     to the real one, so a static import of a JSON file or a script resolves as from source;
//   - import.meta.url, .dirname and .filename replaced by the source file's own, so that what a
//     module reads or starts relative to itself (fixtures, schema, bin/agentpost, the
//     *-source.ts thread starters) is the repository's, as it is under tsx.
// Packages resolve from the repository's node_modules, as from source. The options are tsx's
// (target this Node, tsconfig.json, keepNames, whitespace minified, inline source map without
// the source, so stack traces name the .ts file and its lines).
import { createHash } from 'node:crypto';
import { mkdirSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { cachedDir, pruneUnused } from './cached-dir.mjs';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
/** The folders compiled: those tsconfig.json type-checks (src, bin, schema, test, bench, scripts). */
const COMPILED = JSON.parse(readFileSync(join(root, 'tsconfig.json'), 'utf8')).include;
/** Entries of the repository not linked into the tree: made by runs and builds, or resolved by walking up. */
const UNLINKED = new Set(['.git', '.build', '.tap', 'node_modules', 'dist', 'data', ...COMPILED]);
export const BUILD_DIR = join(root, '.build', 'test');
/** Trees no run used for a day go. */
const UNUSED_MS = 24 * 60 * 60 * 1000;

const filesUnder = (dir) =>
  readdirSync(dir, { withFileTypes: true }).flatMap((item) => {
    const path = join(dir, item.name);
    return item.isDirectory() ? filesUnder(path) : [path];
  });

const isSource = (file) => file.endsWith('.ts') && !file.endsWith('.d.ts');

/** Every file of the compiled folders, relative to the repository, sorted. */
const compiledFolderFiles = () =>
  COMPILED.flatMap((folder) => filesUnder(join(root, folder)))
    .map((file) => relative(root, file))
    .sort();

const linkedEntries = () =>
  readdirSync(root)
    .filter((name) => !UNLINKED.has(name))
    .sort();

/**
 * What decides the tree: each TypeScript file's path and contents, the other files' paths (they
 * are links), the linked entries' names, tsconfig.json, esbuild's version, this Node's version
 * (the target) and this file. Some 30 ms.
 */
const treeKey = (files, entries) => {
  const hash = createHash('sha256');
  for (const file of files) {
    hash.update(`${file}\0`);
    if (isSource(file)) {
      const text = readFileSync(join(root, file));
      hash.update(`${text.length}\0`);
      hash.update(text);
    }
  }
  hash.update(`${entries.join('\0')}\0${process.versions.node}\0`);
  hash.update(readFileSync(join(root, 'tsconfig.json')));
  hash.update(readFileSync(join(root, 'node_modules', 'esbuild', 'package.json')));
  hash.update(readFileSync(fileURLToPath(import.meta.url)));
  return hash.digest('hex').slice(0, 16);
};

/** The module a file that esbuild could not compile becomes: it fails as that file would under tsx, and no other. */
const failing = (file, error) => `throw new SyntaxError(${JSON.stringify(`${file}: ${error.message}`)});\n`;

const compile = async (esbuild, tsconfigRaw, file, out) => {
  const source = join(root, file);
  const url = pathToFileURL(source).href;
  try {
    const result = await esbuild.transform(readFileSync(source, 'utf8'), {
      loader: 'ts',
      format: 'esm',
      target: `node${process.versions.node}`,
      tsconfigRaw,
      sourcefile: relative(dirname(out), source),
      sourcemap: 'inline',
      sourcesContent: false,
      minifyWhitespace: true,
      keepNames: true,
      define: {
        'import.meta.url': JSON.stringify(url),
        'import.meta.dirname': JSON.stringify(dirname(source)),
        'import.meta.filename': JSON.stringify(source),
      },
      logLevel: 'silent',
    });
    writeFileSync(out, result.code);
  } catch (error) {
    writeFileSync(out, failing(file, error));
  }
};

const make = async (tree, files, entries) => {
  const esbuild = await import('esbuild');
  const tsconfigRaw = readFileSync(join(root, 'tsconfig.json'), 'utf8');
  for (const name of entries) symlinkSync(join(root, name), join(tree, name));
  const jobs = [];
  for (const file of files) {
    if (file.endsWith('.d.ts')) continue;
    const out = join(tree, file);
    mkdirSync(dirname(out), { recursive: true });
    if (isSource(file)) jobs.push(compile(esbuild, tsconfigRaw, file, out.replace(/\.ts$/, '.js')));
    else symlinkSync(join(root, file), out);
  }
  await Promise.all(jobs);
};

/**
 * The tree for the sources as they are now (made if missing, some 1.5 s of CPU for ~530
 * files) and `compiled(file)`, the compiled path of a .ts file of those folders (as
 * given, relative to the working folder or absolute; other paths are returned unchanged).
 */
export const testBuild = async () => {
  const files = compiledFolderFiles();
  const entries = linkedEntries();
  const tree = join(BUILD_DIR, treeKey(files, entries));
  await cachedDir(tree, async (making) => {
    pruneUnused(BUILD_DIR, UNUSED_MS, tree);
    mkdirSync(making, { recursive: true });
    await make(making, files, entries);
  });
  const compiled = (file) => {
    const path = relative(root, resolve(file));
    const inside = COMPILED.some((folder) => path.startsWith(`${folder}/`));
    return inside && isSource(path) ? relative(process.cwd(), join(tree, path.replace(/\.ts$/, '.js'))) : file;
  };
  return { tree, compiled };
};
