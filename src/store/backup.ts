import { connect, type OpenOptions } from './db.js';
import { keptStatement, pragma } from './statements.js';

/**
 * Writes a consistent copy of the store file `source` to `target` while the service keeps
 * running in another process. VACUUM INTO reads the whole database inside one read transaction
 * (https://sqlite.org/lang_vacuum.html#vacuuminto): in WAL mode that is one snapshot, which
 * writers do not block and which does not block them, so the copy is the state of one commit.
 * (The page-stepping backup API restarts whenever another process writes, and may never end
 * on a busy server.) The source is opened read-only: no migration, no write. The copy is then
 * checked with quick_check before anyone relies on it.
 */
export const snapshotDatabase = (source: string, target: string, options: OpenOptions = {}): void => {
  const db = connect(source, { ...options, readonly: true });
  try {
    keptStatement(db, 'VACUUM INTO ?').run(target);
  } finally {
    db.close();
  }
  const copy = connect(target, { ...options, readonly: true });
  try {
    const check = pragma(copy, 'quick_check');
    if (check !== 'ok') throw new Error(`the copy of ${source} failed its integrity check: ${String(check)}`);
  } finally {
    copy.close();
  }
};
