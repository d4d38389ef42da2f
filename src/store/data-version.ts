import type { Db } from './db.js';
import { pragma } from './statements.js';

/**
 * Whether another connection (another process on the same data folder) committed since the
 * last look: SQLite's `PRAGMA data_version` changes on a connection only when some other
 * connection commits (https://sqlite.org/pragma.html#pragma_data_version), never for the
 * connection's own commits, which the commit feed already announces. One look is one PRAGMA
 * on the open connection, which reads a counter in the WAL index's shared memory: cheap enough
 * to ask many times a second on an idle server (docs/design.md, "Several processes: wake-ups
 * and exactness").
 */
export class ForeignCommits {
  private seen: number;

  constructor(private readonly db: Db) {
    this.seen = this.version();
  }

  /** True once for each look after which another connection committed. */
  changed(): boolean {
    if (!this.db.open) return false;
    const now = this.version();
    if (now === this.seen) return false;
    this.seen = now;
    return true;
  }

  private version(): number {
    return pragma(this.db, 'data_version') as number;
  }
}
