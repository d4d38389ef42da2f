// A folder made once per key and then shared by every process that asks for the same key: the
// test suite's compiled JavaScript (scripts/test-build.mjs), the worker threads' bundles
// (test/helpers/workers.ts) and the migrated store template (test/helpers/store-template.ts).
import { existsSync, readdirSync, renameSync, rmSync, statSync, utimesSync } from 'node:fs';
import { join } from 'node:path';

/**
 * `dir` when it is there (its time is set to now, marking it as used); else `make(tmp)` fills a
 * folder of this process's own, which is then renamed to `dir`, so processes running side by
 * side never see a half-made one. When another process put `dir` there first, its copy is kept
 * (the same key, so the same contents) and this one's removed. `make` may be async.
 */
export const cachedDir = async (dir, make) => {
  if (markUsed(dir)) return dir;
  const making = `${dir}.${process.pid}.tmp`;
  rmSync(making, { recursive: true, force: true });
  try {
    await make(making);
  } catch (error) {
    rmSync(making, { recursive: true, force: true });
    throw error;
  }
  settle(making, dir);
  return dir;
};

const markUsed = (dir) => {
  if (!existsSync(dir)) return false;
  const now = new Date();
  try {
    utimesSync(dir, now, now);
  } catch {
    // Pruned by another process just now: made again below.
    return existsSync(dir);
  }
  return true;
};

const settle = (making, dir) => {
  try {
    renameSync(making, dir);
  } catch (error) {
    // Another process put the same folder there first.
    rmSync(making, { recursive: true, force: true });
    if (!existsSync(dir)) throw error;
  }
};

/**
 * Removes the folders in `parent` (other than `keep`) that no process marked as used for
 * `unusedMs`, and half-made ones (`*.tmp`) of the same age: each state of the sources makes a
 * new folder.
 */
export const pruneUnused = (parent, unusedMs, keep) => {
  if (!existsSync(parent)) return;
  for (const name of readdirSync(parent)) {
    const folder = join(parent, name);
    if (folder === keep) continue;
    // Another process may be pruning it too.
    const modified = statSync(folder, { throwIfNoEntry: false })?.mtimeMs ?? Date.now();
    if (Date.now() - modified > unusedMs) rmSync(folder, { recursive: true, force: true });
  }
};
