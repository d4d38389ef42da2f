/**
 * `agentpost backup <file>` and `agentpost restore <file>`: the data folder as one tar archive,
 * made while the service runs (docs/operators/deploy.md says how to use them).
 *
 * The archive holds what a restore needs and nothing that can be made again:
 * - `agentpost.db`: a consistent copy of the store (snapshotDatabase: VACUUM INTO);
 * - `secret.key`: the key that seals TOTP seeds (in `secretsDir`, default the data folder); without it every enrolled
 *   second factor is lost;
 * - `backup.json`: what made the archive, so restore can refuse anything else.
 * The full-text index (`agentpost.search.db`) is left out: it is derived data, and a store
 * without it is re-indexed from the raw messages on the first start.
 */
import {
  chmodSync,
  closeSync,
  constants,
  copyFileSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { basename, dirname, join, resolve } from 'node:path';
import packageJson from '../package.json' with { type: 'json' };
import type { OpenOptions } from '../src/store/db.js';

const STORE_FILE = 'agentpost.db';
const SECRET_FILE = 'secret.key';
const MANIFEST_FILE = 'backup.json';
const ENTRIES = [MANIFEST_FILE, STORE_FILE, SECRET_FILE];
const FORMAT = 'agentpost-backup/1';

export const BACKUP_USAGE = `       agentpost backup <file>                      write a consistent backup of the data folder (a tar archive), also while serving
       agentpost restore <file>                     unpack a backup into an empty or new data folder`;

type Report = (text: string, code: number) => number;

/** A working folder beside `near`, on the same file system, removed when `work` ends. */
const withScratch = async <T>(near: string, work: (dir: string) => Promise<T>): Promise<T> => {
  mkdirSync(near, { recursive: true });
  const dir = mkdtempSync(join(near, '.agentpost-backup-'));
  try {
    return await work(dir);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
};

/** The data folder, and the folder of the secret keys (config `secretsDir`, src/config/secrets.ts). */
export interface BackupFolders {
  dataDir: string;
  secretsDir: string;
}

export const backupCommand = async (
  args: string[],
  { dataDir, secretsDir }: BackupFolders,
  options: OpenOptions,
  print: Report,
  fail: Report,
): Promise<number> => {
  if (args.length !== 1) return fail(`usage:\n${BACKUP_USAGE}`, 2);
  const target = resolve(args[0]);
  const store = join(dataDir, STORE_FILE);
  if (!existsSync(store)) return fail(`no database at ${store} (check --data-dir or AGENTPOST_DATA_DIR)`, 1);
  const { snapshotDatabase } = await import('../src/store/backup.js');
  const { create } = await import('tar');
  await withScratch(dirname(target), async (scratch) => {
    snapshotDatabase(store, join(scratch, STORE_FILE), options);
    writeFileSync(join(scratch, SECRET_FILE), readFileSync(join(secretsDir, SECRET_FILE)), { mode: 0o600 });
    writeFileSync(
      join(scratch, MANIFEST_FILE),
      `${JSON.stringify({ format: FORMAT, version: packageJson.version, createdAt: new Date().toISOString(), files: [STORE_FILE, SECRET_FILE] })}\n`,
    );
    // The archive holds the secret key: private from its first byte, and complete under its
    // final name only (a rename), so a crash never leaves a half backup that looks whole.
    const partial = join(scratch, `${basename(target)}.partial`);
    closeSync(openSync(partial, 'w', 0o600));
    await create({ file: partial, cwd: scratch, portable: true }, ENTRIES);
    chmodSync(partial, 0o600);
    renameSync(partial, target);
  });
  return print(`backup written to ${target}`, 0);
};

export const restoreCommand = async (args: string[], { dataDir, secretsDir }: BackupFolders, print: Report, fail: Report): Promise<number> => {
  if (args.length !== 1) return fail(`usage:\n${BACKUP_USAGE}`, 2);
  const archive = resolve(args[0]);
  if (!existsSync(archive)) return fail(`no backup at ${archive}`, 1);
  const present = existsSync(dataDir) ? readdirSync(dataDir).filter((name) => !name.startsWith('.')) : [];
  if (present.length > 0) return fail(`${dataDir} is not empty (${present.slice(0, 3).join(', ')}); restore into a new folder, then point --data-dir at it`, 1);
  const { extract } = await import('tar');
  return withScratch(dataDir, async (scratch) => {
    // Only the archive's known names are unpacked; nothing else, no links, no paths.
    await extract({ file: archive, cwd: scratch, strict: true, filter: (path, entry) => ENTRIES.includes(path) && 'type' in entry && entry.type === 'File' });
    const manifest = readManifest(join(scratch, MANIFEST_FILE));
    if (!manifest) return fail(`${archive} is not an agentpost backup (no ${MANIFEST_FILE} of format ${FORMAT})`, 1);
    for (const name of [STORE_FILE, SECRET_FILE]) {
      if (!existsSync(join(scratch, name))) return fail(`${archive} lacks ${name}`, 1);
    }
    chmodSync(join(scratch, SECRET_FILE), 0o600);
    if (secretsDir !== dataDir) {
      // A shared secrets folder may serve other nodes: its key is never replaced.
      if (existsSync(join(secretsDir, SECRET_FILE))) return fail(`${secretsDir} already holds ${SECRET_FILE}; restore with a new secrets folder`, 1);
      mkdirSync(secretsDir, { recursive: true, mode: 0o700 });
      copyFileSync(join(scratch, SECRET_FILE), join(secretsDir, SECRET_FILE), constants.COPYFILE_EXCL);
    } else renameSync(join(scratch, SECRET_FILE), join(dataDir, SECRET_FILE));
    renameSync(join(scratch, STORE_FILE), join(dataDir, STORE_FILE));
    return print(`restored the backup of ${manifest.createdAt} (agentpost ${manifest.version}) into ${dataDir}`, 0);
  });
};

const readManifest = (file: string): { createdAt: string; version: string } | undefined => {
  try {
    const manifest = JSON.parse(readFileSync(file, 'utf8'));
    return manifest?.format === FORMAT ? manifest : undefined;
  } catch {
    return undefined;
  }
};
