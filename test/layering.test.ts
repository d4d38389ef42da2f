import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import t from 'tap';

/**
 * DESIGN.md "Layout and dependency direction", checked on every import of src/: the rules that
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

const importsOf = (file: string): string[] =>
  [...readFileSync(file, 'utf8').matchAll(/^\s*(?:import|export)\s[^'"]*?from\s+['"]([^'"]+)['"]/gm)]
    .filter((match) => !/^\s*(?:import|export)\s+type\s/.test(match[0]))
    .map((match) => match[1]);

const PROTOCOL_LIBRARIES = /^(koa|@koa\/router|smtp-server|@modelcontextprotocol\/sdk(\/.*)?|node-cron)$/;
const ADAPTERS = new Set(['http', 'mcp', 'smtp', 'imap', 'workers', 'console']);

/** Which layers each layer may import at run time (type-only imports describe shapes and are free). */
const ALLOWED: Record<string, readonly string[]> = {
  core: ['core'],
  mime: ['core', 'mime'],
  store: ['core', 'store'],
  services: ['core', 'mime', 'store', 'services'],
  config: ['core', 'config'],
};

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
    } else if (specifier === 'better-sqlite3' && layer !== 'store' && layer !== 'main') {
      violations.push(`${where}: only src/store/ holds SQL`);
    } else if (PROTOCOL_LIBRARIES.test(specifier) && ['core', 'mime', 'store', 'services'].includes(layer)) {
      violations.push(`${where}: no protocol library below the adapters`);
    }
  }
}

t.same(violations, [], 'every import follows DESIGN.md rules 1 and 2');

const big = filesUnder(SRC)
  .map((file) => ({ file: relative(ROOT, file), lines: readFileSync(file, 'utf8').split('\n').length }))
  .filter(({ lines }) => lines > 300);
if (big.length > 0) t.comment(`files over 300 lines (two concepts?): ${big.map(({ file, lines }) => `${file} (${lines})`).join(', ')}`);
