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
