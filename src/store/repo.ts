import type { Statement } from 'better-sqlite3';
import type { Db } from './db.js';
import { keptStatement } from './statements.js';

/** Base of every repository: prepares each SQL text once per connection and reuses it (statements.ts). */
export abstract class Repo {
  constructor(protected readonly db: Db) {}

  protected sql(text: string): Statement {
    return keptStatement(this.db, text);
  }
}

/**
 * A repository with reads of many pages (IMAP's FETCH, SEARCH and BODY[]): outside a write
 * transaction they go through `reader`, the connection with the memory map (db.ts,
 * MMAP_BYTES); inside one, through the writer, which alone sees what the transaction wrote.
 * Both see the last commit: only this process writes, and its statements run one at a time.
 */
export abstract class MappedReadRepo extends Repo {
  constructor(
    db: Db,
    private readonly reader: Db,
  ) {
    super(db);
  }

  protected mappedRead(text: string): Statement {
    return keptStatement(this.db.inTransaction ? this.db : this.reader, text);
  }
}
