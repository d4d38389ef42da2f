/**
 * A migrated, empty store for startApp's fresh data folders: made once per set of migrations
 * by the real Store.open (every migration, the search index file), then copied. Store.open on
 * the copy finds every migration recorded in schema_migrations and applies none, as it does
 * for any migrated database. Each migration ran in its own synchronous=FULL transaction: about
 * 0.1 s of the main thread per startApp, most of it waiting for fsync.
 *
 * Only a folder startApp made itself gets the copy: a test that passes its own dataDir (a
 * restart, an upgrade from an old database) opens what it gave. test/migrations.test.ts and
 * the store's own tests open their files with Store.open and still migrate from scratch.
 */
import { createHash } from 'node:crypto';
import { copyFileSync, mkdirSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { cachedDir } from '../../scripts/cached-dir.mjs';
import { MIGRATIONS } from '../../src/store/migrations/index.js';
import { Store } from '../../src/store/index.js';

const STORE_FILE = 'agentpost.db';
const ROOT = join(tmpdir(), 'agentpost-test-store');

/**
 * What decides the template's contents: every migration's SQL, the code that opens and
 * prepares the files (pragmas, the search index's schema) and the SQLite addon's version.
 */
const templateKey = (): string => {
  const hash = createHash('sha256');
  hash.update(JSON.stringify(MIGRATIONS));
  for (const file of ['../../src/store/db.ts', '../../src/store/search-db.ts', '../../src/store/index.ts']) {
    hash.update(readFileSync(new URL(file, import.meta.url)));
  }
  hash.update(readFileSync(new URL(import.meta.resolve('better-sqlite3/package.json'))));
  return hash.digest('hex').slice(0, 16);
};

/**
 * The template's folder, made if missing (cachedDir: migrated in a folder of this process's
 * own, then renamed into place, so processes running side by side never copy a half-made one).
 */
const templateDir = (): Promise<string> =>
  cachedDir(join(ROOT, templateKey()), async (making) => {
    mkdirSync(making, { recursive: true });
    Store.open(join(making, STORE_FILE)).close();
  });

let template: Promise<string> | null = null;

/** Copies the migrated, empty store files (the database and its search index) into an empty data folder. */
export const copyMigratedStore = async (dataDir: string): Promise<void> => {
  template ??= templateDir();
  const folder = await template;
  for (const name of readdirSync(folder)) copyFileSync(join(folder, name), join(dataDir, name));
};
