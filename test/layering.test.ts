import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import t from 'tap';

/**
 * docs/design.md "Layout and the rules of dependency", checked on every import of src/: the rules that
 * keep the code easy to change are cheaper to keep than to restore.
 */

const ROOT = resolve(import.meta.dirname, '..');
const SRC = join(ROOT, 'src');

const filesUnder = (dir: string): string[] =>
  readdirSync(dir).flatMap((name) => {
    const path = join(dir, name);
    return statSync(path).isDirectory() ? filesUnder(path) : path.endsWith('.ts') ? [path] : [];
  });

/** The layer of a file: its first folder under src/ (main.ts is its own). */
const layerOf = (file: string): string => relative(SRC, file).split('/')[0].replace(/\.ts$/, '');

/** Every import and re-export of a file; type-only ones too when `withTypes` (a reader follows those as well). */
const importsOf = (file: string, withTypes = false): string[] =>
  [...readFileSync(file, 'utf8').matchAll(/^\s*(?:import|export)\s[^'"]*?from\s+['"]([^'"]+)['"]/gm)]
    .filter((match) => withTypes || !/^\s*(?:import|export)\s+type\s/.test(match[0]))
    .map((match) => match[1]);

const PROTOCOL_LIBRARIES = /^(koa|@koa\/router|smtp-server|@modelcontextprotocol\/sdk(\/.*)?|node-cron)$/;
const ADAPTERS = new Set(['http', 'mcp', 'smtp', 'imap', 'console']);
const ADAPTER_MAY: readonly string[] = ['core', 'mime', 'services'];

/**
 * Which layers each layer may import at run time (type-only imports describe shapes and are
 * free). Every folder of src/ has a row; only the composition (src/app/, src/main.ts) sees all.
 */
const ALLOWED: Record<string, readonly string[]> = {
  core: ['core'],
  mime: ['core', 'mime'],
  store: ['core', 'store'],
  services: ['core', 'mime', 'store', 'services'],
  config: ['core', 'config'],
  // Outgoing network clients, handed to the services by injection.
  net: ['core', 'config', 'net'],
  tls: ['core', 'config', 'tls'],
  // The queue runner, the lifecycle and the calendar: they run services, they hold no rules.
  runtime: ['core', 'services', 'runtime'],
  // OS worker threads: each is an entry point of its own, loading what its work needs.
  workers: ['core', 'mime', 'store', 'services', 'net', 'runtime', 'workers'],
  http: [...ADAPTER_MAY, 'http'],
  mcp: [...ADAPTER_MAY, 'mcp'],
  smtp: [...ADAPTER_MAY, 'smtp'],
  imap: [...ADAPTER_MAY, 'imap'],
  console: [...ADAPTER_MAY, 'console'],
};
const COMPOSITION = new Set(['app', 'main']);

const violations: string[] = [];
for (const file of filesUnder(SRC)) {
  const layer = layerOf(file);
  for (const specifier of importsOf(file)) {
    const where = `${relative(ROOT, file)} imports ${specifier}`;
    if (specifier.startsWith('.')) {
      const path = resolve(dirname(file), specifier);
      if (!path.startsWith(`${SRC}/`)) continue; // schema/ is data, not a layer
      const target = layerOf(path);
      if (ALLOWED[layer] && !ALLOWED[layer].includes(target)) violations.push(`${where}: ${layer} may not depend on ${target}`);
      if (ADAPTERS.has(layer) && ADAPTERS.has(target) && target !== layer) {
        violations.push(`${where}: adapters never import each other`);
      }
    } else if ((specifier === 'better-sqlite3' || specifier === 'pg') && layer !== 'store' && layer !== 'main') {
      violations.push(`${where}: only src/store/ holds SQL`);
    } else if (PROTOCOL_LIBRARIES.test(specifier) && ['core', 'mime', 'store', 'services'].includes(layer)) {
      violations.push(`${where}: no protocol library below the adapters`);
    }
  }
}

t.same(violations, [], 'every import follows the layering of docs/design.md');

t.same(
  readdirSync(SRC)
    .map((name) => name.replace(/\.ts$/, ''))
    .filter((layer) => !ALLOWED[layer] && !COMPOSITION.has(layer)),
  [],
  'every folder of src/ has its rule',
);

/** The strongly connected groups (more than one member) of a directed graph: its import loops. */
const loops = (graph: Map<string, Set<string>>): string[][] => {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const found: string[][] = [];
  const visit = (node: string): void => {
    index.set(node, index.size);
    low.set(node, index.get(node) as number);
    stack.push(node);
    for (const next of graph.get(node) ?? []) {
      if (!index.has(next)) {
        visit(next);
        low.set(node, Math.min(low.get(node) as number, low.get(next) as number));
      } else if (stack.includes(next)) low.set(node, Math.min(low.get(node) as number, index.get(next) as number));
    }
    if (low.get(node) !== index.get(node)) return;
    const group = stack.splice(stack.indexOf(node));
    if (group.length > 1) found.push(group.sort());
  };
  for (const node of graph.keys()) if (!index.has(node)) visit(node);
  return found;
};

/** A service file's feature folder (`services/mail`), or `services` for the files at its top. */
const serviceFolderOf = (path: string): string =>
  path
    .split('/')
    .slice(0, path.split('/').length > 2 ? 2 : 1)
    .join('/');

const fileGraph = new Map<string, Set<string>>();
const folderGraph = new Map<string, Set<string>>();
for (const file of filesUnder(SRC)) {
  const from = relative(SRC, file);
  const targets = importsOf(file, true)
    .filter((specifier) => specifier.startsWith('.'))
    .map((specifier) => relative(SRC, resolve(dirname(file), specifier)).replace(/\.js$/, '.ts'))
    .filter((target) => !target.startsWith('..'));
  fileGraph.set(from, new Set(targets));
  if (!from.startsWith('services/') || from === 'services/index.ts') continue;
  for (const target of targets.filter((path) => path.startsWith('services/') && path !== 'services/index.ts')) {
    const [a, b] = [serviceFolderOf(from), serviceFolderOf(target)];
    if (a !== b) folderGraph.set(a, (folderGraph.get(a) ?? new Set()).add(b));
  }
}
t.same(loops(fileGraph), [], 'no file imports itself through others, type-only imports included');
t.same(loops(folderGraph), [], "no loop between the services' feature folders (services/index.ts, which builds them all, aside)");

const big = filesUnder(SRC)
  .map((file) => ({ file: relative(ROOT, file), lines: readFileSync(file, 'utf8').split('\n').length }))
  .filter(({ lines }) => lines > 300);
if (big.length > 0) t.comment(`files over 300 lines (two concepts?): ${big.map(({ file, lines }) => `${file} (${lines})`).join(', ')}`);
