import type { Statement } from 'better-sqlite3';
import type { Db } from './db.js';

/** Base of every repository: prepares each SQL text once per connection and reuses it. */
export abstract class Repo {
  private readonly statements = new Map<string, Statement>();

  constructor(protected readonly db: Db) {}

  protected sql(text: string): Statement {
    let statement = this.statements.get(text);
    if (!statement) {
      statement = this.db.prepare(text);
      this.statements.set(text, statement);
    }
    return statement;
  }
}
