import { judgmentOf, type JunkJudgment } from '../../core/junk.js';
import type { Logger } from '../../core/logger.js';
import type { ParseMail } from '../../core/parsed-message.js';
import { withoutOwnTrace } from '../../mime/own-trace.js';
import type { Store } from '../../store/index.js';
import { SERVER_MODEL_ID, type TrainedMessage, type TrainingSubject } from '../../store/junk.js';
import type { CountChange, JunkModels } from './models.js';

/** Queued messages read per step. */
const BATCH = 100;

/** What a planned training changes, worked out before its commit (the parse runs outside it). */
interface Plan {
  subject: TrainingSubject;
  wanted: JunkJudgment;
  fresh: TrainedMessage | null;
  modelId: number;
}

/**
 * Makes the models follow the mailboxes' judgments. A judgment is a message's $Junk or
 * $NotJunk keyword (set by POST /api/v1/agent/email/{id}/junk, an IMAP client, or a move into
 * or out of Junk: src/services/mail/junk-judgments.ts); the change queues the message (junk_queue)
 * in its own transaction. Here each queued message's earlier training is taken back exactly
 * (junk_trained keeps what it added) and its features, read again from its stored bytes, are
 * counted under the new judgment, in the mailbox's model and, for the operator's mailboxes
 * (`junk.serverModelTrainers`), in the server-wide one. One run at a time.
 */
export class JunkTrainingService {
  private tail: Promise<unknown> = Promise.resolve();

  constructor(
    private readonly store: Store,
    private readonly models: JunkModels,
    private readonly parse: ParseMail,
    private readonly logger: Logger,
    private readonly config: { hostname: string; serverModelTrainers: readonly string[] },
  ) {}

  /** Trains every message queued so far; resolves once done (a REST judgment answers after it). */
  catchUp(): Promise<number> {
    const run = this.tail.then(() => this.trainQueued());
    this.tail = run.catch(() => undefined);
    return run;
  }

  private async trainQueued(): Promise<number> {
    const failed = new Set<number>();
    let trained = 0;
    for (;;) {
      const batch = (await this.store.junk.queued(BATCH + failed.size)).filter((rowId) => !failed.has(rowId));
      if (batch.length === 0) return trained;
      for (const rowId of batch.slice(0, BATCH)) {
        try {
          if (await this.trainOne(rowId)) trained += 1;
        } catch (error) {
          // Left queued for the next run (the next judgment, or the next start).
          failed.add(rowId);
          this.logger.warn('training the junk filter failed', { message: rowId, error: error instanceof Error ? error.message : String(error) });
        }
      }
    }
  }

  /** True when a model changed. A message changed again meanwhile stays queued and is planned anew. */
  private async trainOne(rowId: number): Promise<boolean> {
    const plan = await this.plan(rowId);
    if (plan === null) {
      await this.store.groupCommit(() => this.dequeueIfSettled(rowId));
      return false;
    }
    const changes = new Map<number, CountChange[]>([[plan.modelId, []]]);
    if (plan.subject.trained?.server || plan.fresh?.server) changes.set(SERVER_MODEL_ID, []);
    for (const modelId of changes.keys()) this.models.beginTraining(modelId);
    let committed = false;
    try {
      committed = await this.store.groupCommit(() => this.apply(plan, changes));
    } finally {
      for (const [modelId, list] of changes) this.models.endTraining(modelId, committed ? list : []);
    }
    return committed;
  }

  /** Null when there is nothing to do: the message is gone, or its training matches its judgment. */
  private async plan(rowId: number): Promise<Plan | null> {
    const subject = await this.store.junk.subject(rowId);
    if (!subject) return null;
    const wanted = judgmentOf(subject.keywords);
    if (wanted === trainedAs(subject.trained)) return null;
    const fresh = wanted === null ? null : await this.featuresOf(subject, wanted === 'junk');
    // Its bytes are gone with it (removed meanwhile).
    if (wanted !== null && fresh === null) return null;
    const modelId =
      (await this.store.junk.modelOfMailbox(subject.mailboxId))?.id ??
      (await this.store.transaction(async () => (await this.store.junk.ensureModel(subject.mailboxId)).id));
    return { subject, wanted, fresh, modelId };
  }

  /** The message as it arrived (without the trace field this service put on top), parsed again for its features. */
  private async featuresOf(subject: TrainingSubject, asJunk: boolean): Promise<TrainedMessage | null> {
    const raw = await this.store.messageRaw.bytes(subject.rowId);
    if (!raw) return null;
    const parsed = await this.parse(withoutOwnTrace(raw, this.config.hostname), { junkFeatures: true });
    return {
      asJunk,
      server: this.config.serverModelTrainers.includes(subject.address),
      sender: parsed.from?.email.toLowerCase() ?? null,
      features: parsed.junkFeatures ?? new Int32Array(0),
    };
  }

  /** Inside the commit: the message leaves the queue unless a judgment changed since it was looked at. */
  private async dequeueIfSettled(rowId: number): Promise<void> {
    const now = await this.store.junk.subject(rowId);
    if (!now || judgmentOf(now.keywords) === trainedAs(now.trained)) await this.store.junk.dequeue(rowId);
  }

  /** Inside the commit: false (nothing written) when the message changed since the plan. */
  private async apply(plan: Plan, changes: Map<number, CountChange[]>): Promise<boolean> {
    const { subject, fresh } = plan;
    const now = await this.store.junk.subject(subject.rowId);
    if (!now || judgmentOf(now.keywords) !== plan.wanted || trainedAs(now.trained) !== trainedAs(subject.trained)) return false;
    const old = subject.trained;
    if (old) await this.count(subject, old, -1, changes);
    if (fresh) await this.count(subject, fresh, 1, changes);
    await this.store.junk.setTrained(subject.rowId, fresh);
    await this.store.junk.dequeue(subject.rowId);
    return true;
  }

  private async count(subject: TrainingSubject, trained: TrainedMessage, delta: 1 | -1, changes: Map<number, CountChange[]>): Promise<void> {
    const change: CountChange = { features: trained.features, asJunk: trained.asJunk, delta };
    for (const [modelId, list] of changes) {
      if (modelId === SERVER_MODEL_ID && !trained.server) continue;
      await this.store.junk.count(modelId, trained.features, trained.asJunk, delta);
      list.push(change);
    }
    if (trained.sender) await this.store.junk.countSender(subject.mailboxId, trained.sender, trained.asJunk, delta);
  }
}

const trainedAs = (trained: TrainedMessage | null): JunkJudgment => (trained === null ? null : trained.asJunk ? 'junk' : 'notJunk');
