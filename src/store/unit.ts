import { AsyncLocalStorage } from 'node:async_hooks';

/**
 * A repository as the rest of the service sees it: every method answers a promise. The SQLite
 * repositories (this folder) run their statements synchronously on one connection; a store on
 * a server (PostgreSQL) answers over the network. Services are written once, against this shape,
 * and await every call (docs/design.md, "The store boundary").
 */
export type Async<R> = {
  [K in keyof R]: R[K] extends (...args: infer A) => infer T ? (...args: A) => Promise<Awaited<T>> : R[K];
};

/** One unit of work holding the connection: a transaction, or a group commit's batch. */
interface Unit {
  /** Set when the unit was still open at a later turn of the event loop (see `open`). */
  spannedTurn: boolean;
}

/**
 * Whose turn it is on the one SQLite connection. A unit of work (store.transaction, a group
 * commit's batch) holds the connection from its BEGIN to its COMMIT; its body is asynchronous,
 * so other code runs between two of its awaits. Code inside the unit (its async context, kept
 * by AsyncLocalStorage) uses the connection at once; code outside waits until the unit ends.
 * Otherwise a request's write would join another request's open transaction on the shared
 * connection and be rolled back with it, and its reads would see writes not yet committed.
 *
 * On SQLite every repository call answers at once, so a unit that awaits only the store ends
 * within the turn of the event loop that opened it; one that awaits anything else (a DNS
 * answer, a thread) would hold every other caller, and the write lock, that long.
 * `strictUnits` makes such a unit fail at its commit (tests run with it); otherwise it is
 * logged through `onSpannedTurn`.
 */
export class ConnectionTurns {
  private static readonly byFile = new Map<string, ConnectionTurns>();

  /**
   * The turns of a database file in this process, shared by every connection to it: a second
   * connection's BEGIN IMMEDIATE while a unit of the first is open would wait for its lock on
   * the thread that unit needs (SQLite's busy wait blocks it), until the busy timeout. Tests open
   * two stores on one file to play two processes; one service opens one. Null: a memory database.
   */
  static forFile(file: string | null): ConnectionTurns {
    if (file === null) return new ConnectionTurns();
    let turns = ConnectionTurns.byFile.get(file);
    if (!turns) ConnectionTurns.byFile.set(file, (turns = new ConnectionTurns()));
    return turns;
  }

  private readonly context = new AsyncLocalStorage<Unit>();
  private holder: Unit | null = null;
  private waiters: Array<() => void> = [];

  constructor(
    private readonly strictUnits = process.env.AGENTPOST_STRICT_UNITS === '1',
    private readonly onSpannedTurn: (error: Error) => void = (error) => process.emitWarning(error),
  ) {}

  /** Whether code running now is inside the unit that holds the connection. */
  inUnit(): boolean {
    return this.holder !== null && this.context.getStore() === this.holder;
  }

  /** Runs one repository call now when the connection is free or ours, else once it is. */
  call<T>(work: () => T): Promise<T> {
    if (this.holder === null || this.context.getStore() === this.holder) {
      try {
        return Promise.resolve(work());
      } catch (error) {
        return Promise.reject(error);
      }
    }
    return this.free().then(() => this.call(work));
  }

  /**
   * Runs `work` as the unit holding the connection, once no other unit does; `begin` and
   * `end` (its BEGIN and COMMIT or ROLLBACK) run inside the unit too.
   */
  async open<T>(work: () => Promise<T>): Promise<T> {
    while (this.holder !== null) await this.free();
    const unit: Unit = { spannedTurn: false };
    this.holder = unit;
    const watch = setImmediate(() => {
      unit.spannedTurn = true;
    });
    try {
      return await this.context.run(unit, work);
    } finally {
      clearImmediate(watch);
      this.holder = null;
      const waiters = this.waiters;
      this.waiters = [];
      for (const wake of waiters) wake();
    }
  }

  /**
   * Inside a unit, just before its commit: a unit that stayed open past the turn it began in
   * fails in strict mode (the caller rolls it back) and is reported otherwise.
   */
  checkTurn(): void {
    if (!this.holder?.spannedTurn) return;
    const error = new Error('a unit of work stayed open across a turn of the event loop: it awaited something other than the store');
    if (this.strictUnits) throw error;
    this.onSpannedTurn(error);
  }

  private free(): Promise<void> {
    return new Promise((resolve) => this.waiters.push(resolve));
  }
}

/**
 * The async face of a synchronous repository: each method runs on the connection in turn
 * (ConnectionTurns.call) and answers a promise; the repository itself is not changed.
 */
export const asyncRepo = <R extends object>(repo: R, turns: ConnectionTurns): Async<R> => {
  const facade: Record<string, unknown> = {};
  for (const name of methodNames(repo)) {
    const method = (repo as Record<string, unknown>)[name] as (...args: unknown[]) => unknown;
    facade[name] = (...args: unknown[]) => turns.call(() => method.apply(repo, args));
  }
  for (const [name, value] of Object.entries(repo)) if (!(name in facade)) facade[name] = value;
  return facade as Async<R>;
};

const methodNames = (repo: object): Set<string> => {
  const names = new Set<string>();
  for (let proto = Object.getPrototypeOf(repo); proto !== null && proto !== Object.prototype; proto = Object.getPrototypeOf(proto)) {
    for (const name of Object.getOwnPropertyNames(proto)) {
      if (name !== 'constructor' && typeof Object.getOwnPropertyDescriptor(proto, name)?.value === 'function') names.add(name);
    }
  }
  return names;
};
