import type { Logger } from '../../core/logger.js';
import type { Store } from '../../store/index.js';
import type { JunkModel } from '../../store/junk.js';
import { FeatureTable } from './feature-table.js';
import { featureProbability, isClue } from './statistics.js';

/** Rows of a model read per turn of the event loop while it is loaded into memory. */
const LOAD_ROWS_PER_TURN = 20_000;

/** One message's features counted (delta 1) or taken back (-1) as ham or junk. */
export interface CountChange {
  features: Int32Array;
  asJunk: boolean;
  delta: 1 | -1;
}

interface Cached {
  table: FeatureTable;
  /** False while its rows are still being read: verdicts read SQLite until then. */
  complete: boolean;
}

/**
 * The models' feature counts for verdicts. A verdict reads a few hundred counts; from SQLite
 * that is one seek each (about half a millisecond a message), so the models in use are held in
 * memory (FeatureTable), the least recently used dropped past `budgetBytes`. A model not in
 * memory yet is read from SQLite for its verdict while its rows are loaded, a page per turn
 * of the event loop, so a large model never holds the loop up.
 *
 * A training changes the database first: between `beginTraining` and `endTraining` no load of
 * that model starts (one in progress is dropped), and the change is applied to a table in
 * memory only after its commit, so a table never counts a training twice or misses one.
 */
export class JunkModels {
  /** In order of last use, oldest first. */
  private readonly cache = new Map<number, Cached>();
  private readonly training = new Map<number, number>();

  constructor(
    private readonly store: Store,
    private readonly logger: Logger,
    private readonly budgetBytes: number,
  ) {}

  /** The probabilities of those of the message's features that tell something, in this model. */
  async clues(model: JunkModel, features: Int32Array): Promise<number[]> {
    const cached = this.use(model.id);
    const clues: number[] = [];
    const addClue = (ham: number, junk: number): void => {
      const probability = featureProbability(ham, junk, model);
      if (isClue(probability)) clues.push(probability);
    };
    if (cached?.complete) {
      const counts: [number, number] = [0, 0];
      for (const feature of features) if (cached.table.read(feature, counts)) addClue(counts[0], counts[1]);
    } else {
      for (const [, ham, junk] of await this.store.junk.counts(model.id, features)) addClue(ham, junk);
    }
    return clues;
  }

  /** Before a training's commit: no load of the model starts until `endTraining`. */
  beginTraining(modelId: number): void {
    this.training.set(modelId, (this.training.get(modelId) ?? 0) + 1);
    if (this.cache.get(modelId)?.complete === false) this.cache.delete(modelId);
  }

  /** After the commit (or its failure, with no changes): the changes applied to the model in memory. */
  endTraining(modelId: number, changes: readonly CountChange[]): void {
    const left = (this.training.get(modelId) ?? 1) - 1;
    if (left > 0) this.training.set(modelId, left);
    else this.training.delete(modelId);
    const cached = this.cache.get(modelId);
    if (!cached?.complete) return;
    for (const change of changes) {
      const [ham, junk] = change.asJunk ? [0, change.delta] : [change.delta, 0];
      for (const feature of change.features) cached.table.add(feature, ham, junk);
    }
    this.evict();
  }

  /** Whether the model is in memory, loaded whole (benches and tests). */
  isHeld(modelId: number): boolean {
    return this.cache.get(modelId)?.complete === true;
  }

  /** Bytes the models in memory hold (benches and tests). */
  heldBytes(): number {
    let bytes = 0;
    for (const { table } of this.cache.values()) bytes += table.bytes;
    return bytes;
  }

  /** The model's table, marked as just used; a load starts when it has none and no training is under way. */
  private use(modelId: number): Cached | undefined {
    const cached = this.cache.get(modelId);
    if (cached) {
      this.cache.delete(modelId);
      this.cache.set(modelId, cached);
      return cached;
    }
    if (!this.training.has(modelId)) this.load(modelId);
    return undefined;
  }

  private load(modelId: number): void {
    const entry: Cached = { table: new FeatureTable(), complete: false };
    this.cache.set(modelId, entry);
    let after = -(2 ** 31) - 1;
    const step = async (): Promise<void> => {
      // Dropped meanwhile (a training began, or evicted), or the server is stopping: the load ends here.
      if (this.cache.get(modelId) !== entry || !this.store.db.open) return;
      try {
        const rows = await this.store.junk.featurePage(modelId, after, LOAD_ROWS_PER_TURN);
        for (const [feature, ham, junk] of rows) entry.table.add(feature, ham, junk);
        if (rows.length < LOAD_ROWS_PER_TURN) {
          entry.complete = true;
          this.evict();
          return;
        }
        after = rows[rows.length - 1][0];
        setImmediate(step);
      } catch (error) {
        this.cache.delete(modelId);
        this.logger.warn('loading a junk model into memory failed; its verdicts read the database', {
          model: modelId,
          error: error instanceof Error ? error.message : String(error),
        });
      }
    };
    setImmediate(step);
  }

  /** Drops the least recently used models until the rest fit the budget (the one in use last stays). */
  private evict(): void {
    let bytes = this.heldBytes();
    for (const [modelId, { table }] of this.cache) {
      if (bytes <= this.budgetBytes || this.cache.size <= 1) return;
      this.cache.delete(modelId);
      bytes -= table.bytes;
    }
  }
}
