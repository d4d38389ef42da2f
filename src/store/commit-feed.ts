/** One change that a transaction made, as its consumers hear of it after the commit. */
export interface Committed<T = unknown> {
  topic: string;
  payload: T;
  /** The outbox row that holds it durably; absent for a notice. */
  outboxId?: number;
}

export type CommitListener<T = unknown> = (entries: readonly Committed<T>[]) => void;

/**
 * The store's one after-commit hook. Everything that reacts to a change (search indexing,
 * webhook dispatch, the delivery kick, IMAP IDLE, event streams) subscribes here by topic,
 * and hears of the change only once the transaction that made it is committed and durable,
 * never of one that rolled back.
 *
 * Durable facts are outbox rows (docs/design.md rule 6: a consumer that must not miss one reads
 * the outbox table with its own cursor, and the feed only wakes it). Notices are facts that
 * matter only to whoever is listening now (a flag changed under an IMAP IDLE client); they
 * are never written to the database.
 *
 * Listeners run synchronously at publish time and must be cheap: they schedule work, they
 * do not do it. A listener that throws is isolated from the others and from the committer.
 */
export class CommitFeed {
  private staged: Committed[] = [];
  private readonly listeners = new Map<string, Set<CommitListener>>();

  /** Records a change of the transaction in progress (the store publishes it after commit). */
  stage(topic: string, payload: unknown, outboxId?: number): void {
    this.staged.push(outboxId === undefined ? { topic, payload } : { topic, payload, outboxId });
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
    const names = typeof topics === 'string' ? [topics] : topics;
    for (const topic of names) {
      let set = this.listeners.get(topic);
      if (!set) this.listeners.set(topic, (set = new Set()));
      set.add(listener as CommitListener);
    }
    return () => {
      for (const topic of names) this.listeners.get(topic)?.delete(listener as CommitListener);
    };
  }

  /** Tells each listener, once, of the entries of its topics. */
  publish(entries: readonly Committed[]): void {
    if (entries.length === 0) return;
    const byListener = new Map<CommitListener, Committed[]>();
    for (const entry of entries) {
      for (const listener of this.listeners.get(entry.topic) ?? []) {
        const list = byListener.get(listener);
        if (list) list.push(entry);
        else byListener.set(listener, [entry]);
      }
    }
    for (const [listener, list] of byListener) {
      try {
        listener(list);
      } catch {
        // The change is committed; a listener's failure is its own and must not stop the others.
      }
    }
  }
}
