import type { Clock } from '../../core/clock.js';
import type { StagedValues, StoredBody } from '../../core/stored-message.js';
import type { Store } from '../../store/index.js';

/** How long a staged value waits for its commit before the sweep removes it: far past any commit's wait. */
const STAGED_GRACE_MS = 60 * 60 * 1000;

/** The stored texts a large message may have written ahead of its commit. */
const TEXT_NAMES = ['text', 'html', 'extractedText', 'extractedHtml'] as const;

/**
 * Before the commit that appends a message: its parts too large to be written in that commit
 * without holding the event loop (its raw bytes, its texts), written in pieces ahead of it
 * (src/store/large-values.ts). The append then names them (`AppendOptions.staged`).
 */
export class MessageStaging {
  constructor(
    private readonly store: Store,
    private readonly clock: Clock,
  ) {}

  /** What was written ahead; undefined when all of the message fits its commit. */
  async stage(raw: Buffer, body: StoredBody | null): Promise<StagedValues | undefined> {
    const now = this.clock.now().getTime();
    const staged: StagedValues = {};
    const rawValue = await this.store.stage(raw, now);
    if (rawValue !== null) staged.raw = rawValue;
    for (const name of TEXT_NAMES) {
      const text = body?.packed[name];
      const textValue = typeof text === 'string' ? await this.store.stage(text, now) : null;
      if (textValue !== null) staged.texts = { ...staged.texts, [name]: textValue };
    }
    return staged.raw === undefined && staged.texts === undefined ? undefined : staged;
  }

  /** Removes what `stage` wrote for commits that never came (a crash, a refused message) over an hour ago. */
  async sweep(): Promise<number> {
    return await this.store.transaction(() => this.store.largeValues.sweepUnattached(this.clock.now().getTime() - STAGED_GRACE_MS));
  }
}
