/** One change that a transaction made, as its consumers hear of it after the commit. */
export interface Committed<T = unknown> {
  topic: string;
  payload: T;
  /** A change to the stored state (a message stored, a recipient's outcome), not a notice. */
  change?: true;
}

/** An after-commit listener; one that awaits (reads the store) settles on its own, its failure ignored as a throw is. */
export type CommitListener<T = unknown> = (entries: readonly Committed<T>[]) => unknown;

/** A beforeCommit hook: it writes inside the transaction, so it may await the store. */
export type CommitPreparer<T = unknown> = (entries: readonly Committed<T>[]) => Promise<void> | void;

/**
 * The store's one after-commit hook. Everything that reacts to a change (search indexing,
 * webhook dispatch, the delivery kick, IMAP IDLE, event streams) subscribes here by topic,
 * and hears of the change only once the transaction that made it is committed and durable,
 * never of one that rolled back.
 *
 * Changes are what the transaction stored (docs/design.md rule 6); whatever must not miss one
 * writes its own durable record of it in the same transaction, through a hook that runs just
 * before the commit (`beforeCommit`: the webhook events and the event log are written so), so
 * a crash loses the change and the record together or neither. Notices are facts that matter
 * only to whoever is listening now (a flag changed under an IMAP IDLE client).
 *
 * Listeners run synchronously at publish time and must be cheap: they schedule work, they
 * do not do it. A listener that throws is isolated from the others and from the committer.
 */
export class CommitFeed {
  private staged: Committed[] = [];
  private readonly listeners = new Map<string, Set<CommitListener>>();
  private readonly preparers = new Map<string, Set<CommitPreparer>>();

  /** Records a change (or, with `change` false, a notice) of the transaction in progress; the store publishes it after commit. */
  stage(topic: string, payload: unknown, change = false): void {
    this.staged.push(change ? { topic, payload, change } : { topic, payload });
  }

  /**
   * `handler` runs inside every transaction that staged changes of `topics`, once, just before
   * its commit, with those changes: what it writes commits with them. A handler that throws
   * rolls the transaction back, as any other statement of it would.
   */
  beforeCommit<T>(topics: readonly string[], handler: CommitPreparer<T>): () => void {
    return addListener(this.preparers, topics, handler as CommitPreparer);
  }

  /** Inside the transaction, before its commit: the beforeCommit handlers of what was staged since `mark`. */
  async prepare(mark: number): Promise<void> {
    if (this.preparers.size === 0 || this.staged.length === mark) return;
    const changes = this.staged.slice(mark).filter((entry) => entry.change);
    for (const [handler, list] of byListener(this.preparers, changes)) await handler(list);
  }

  /** How many changes are staged; a later `rewind` to it forgets what a rolled-back transaction staged. */
  mark(): number {
    return this.staged.length;
  }

  rewind(mark: number): void {
    this.staged.length = Math.min(mark, this.staged.length);
  }

  /** Takes what was staged since `mark` out of the feed, to publish once it is durable. */
  take(mark = 0): Committed[] {
    return this.staged.splice(mark);
  }

  subscribe<T>(topics: string | readonly string[], listener: CommitListener<T>): () => void {
    return addListener(this.listeners, typeof topics === 'string' ? [topics] : topics, listener as CommitListener);
  }

  /** Tells each listener, once, of the entries of its topics. */
  publish(entries: readonly Committed[]): void {
    for (const [listener, list] of byListener(this.listeners, entries)) {
      try {
        const outcome = listener(list);
        if (outcome instanceof Promise) outcome.catch(() => undefined);
      } catch {
        // The change is committed; a listener's failure is its own and must not stop the others.
      }
    }
  }
}

const addListener = <L>(registry: Map<string, Set<L>>, topics: readonly string[], listener: L): (() => void) => {
  for (const topic of topics) {
    let set = registry.get(topic);
    if (!set) registry.set(topic, (set = new Set()));
    set.add(listener);
  }
  return () => {
    for (const topic of topics) registry.get(topic)?.delete(listener);
  };
};

/** Each listener with the entries of its topics, in the order they were staged. */
const byListener = <L>(registry: Map<string, Set<L>>, entries: readonly Committed[]): Map<L, Committed[]> => {
  const lists = new Map<L, Committed[]>();
  for (const entry of entries) {
    for (const listener of registry.get(entry.topic) ?? []) {
      const list = lists.get(listener);
      if (list) list.push(entry);
      else lists.set(listener, [entry]);
    }
  }
  return lists;
};
