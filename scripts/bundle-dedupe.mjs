// An esbuild plugin for scripts/package.mjs: one copy of a package in the bundle where npm
// installed two. A package that pins an exact version of a dependency gets its own copy nested
// under it (node_modules/mailauth/node_modules/iconv-lite) whenever the top-level copy differs at
// all. Where the top-level copy has the same major version (for 0.x, the same minor), semver says
// it serves the same API, so imports of the nested copy take the top-level one. mailauth pins
// iconv-lite, encoding-japanese and libmime, koa's mime-db is older: a tenth of the main bundle
// (docs/operators/single-executable.md), whose source V8 keeps in the heap for the process's life
// (see `charset` in package.mjs). A different major stays nested.
import { existsSync, readdirSync, readFileSync, realpathSync } from 'node:fs';
import { join } from 'node:path';

const versionOf = (folder) => JSON.parse(readFileSync(join(folder, 'package.json'), 'utf8')).version;

/** Semver's compatibility line: the major version, or major.minor below 1.0.0. */
const line = (version) => {
  const [major, minor] = version.split('.');
  return major === '0' ? `0.${minor}` : major;
};

/** Package names one level below another package's node_modules, scoped names included. */
const nestedNames = (folder) => {
  if (!existsSync(folder)) return [];
  return readdirSync(folder).flatMap((name) => {
    if (name.startsWith('.')) return [];
    return name.startsWith('@') ? readdirSync(join(folder, name)).map((inner) => `${name}/${inner}`) : [name];
  });
};

/** Nested copies (one level deep) that share their line with the top-level copy: their folders. */
export const dedupableCopies = (root) => {
  const modules = join(root, 'node_modules');
  return nestedNames(modules).flatMap((owner) =>
    nestedNames(join(modules, owner, 'node_modules')).flatMap((name) => {
      const top = join(modules, name);
      const nested = join(modules, owner, 'node_modules', name);
      if (!existsSync(join(top, 'package.json')) || !existsSync(join(nested, 'package.json'))) return [];
      // esbuild reports real paths (node_modules may be a symbolic link).
      return line(versionOf(top)) === line(versionOf(nested)) ? [realpathSync(nested)] : [];
    }),
  );
};

/** An import that resolves into a dedupable nested copy is resolved again from the project root, which finds the top-level copy. */
export const dedupeNested = (root) => {
  const copies = dedupableCopies(root).map((folder) => `${folder}/`);
  return {
    name: 'dedupe-nested',
    setup(build) {
      build.onResolve({ filter: /^[^./]/ }, async (args) => {
        if (args.pluginData?.dedupeChecked || args.resolveDir === root) return undefined;
        const options = { kind: args.kind, importer: args.importer, pluginData: { ...args.pluginData, dedupeChecked: true } };
        const resolved = await build.resolve(args.path, { ...options, resolveDir: args.resolveDir });
        if (resolved.errors.length > 0 || !copies.some((folder) => resolved.path.startsWith(folder))) return undefined;
        return build.resolve(args.path, { ...options, resolveDir: root });
      });
    },
  };
};
