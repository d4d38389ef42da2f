import type { AuthenticationVerdict, Trust } from '../../core/authentication.js';
import type { JunkReason, JunkSettings, JunkVerdict } from '../../core/junk.js';
import type { Logger } from '../../core/logger.js';
import type { MailboxRecord } from '../../store/accounts.js';
import type { Store } from '../../store/index.js';
import { SERVER_MODEL_ID, type JunkModel } from '../../store/junk.js';
import type { BlocklistAnswer, JunkEvidence } from '../../core/junk.js';
import { NOT_LISTED, type Blocklists } from './blocklists.js';

export type { JunkEvidence } from '../../core/junk.js';
import type { JunkModels } from './models.js';
import { combine } from './statistics.js';

/** The statistics give -5 (surely ham) to +5 (surely junk) points. */
const STATISTICS_POINTS = 10;
/** Known senders lower the score the more, the better their address is authenticated. */
const CORRESPONDENT_POINTS: Partial<Record<Trust, number>> = { verified: -5, unverified: -2 };
const HAM_SENDER_POINTS: Partial<Record<Trust, number>> = { verified: -4, unverified: -2 };
const JUNK_SENDER_POINTS = 2;
const AUTHENTICATION_POINTS: Partial<Record<Trust, number>> = { failed: 2, suspicious: 1 };

/**
 * The verdict on one received message for one mailbox (docs/agents/junk.md): the mailbox's own
 * statistical model (or, while it has too few judgments, the server-wide one), whether the
 * mailbox has written to the sender or judged the sender's mail before, the authentication
 * verdict and the DNS blocklists, each worth points. Never throws: a failure is a verdict that
 * says so, and the message goes to INBOX.
 */
export class JunkFilter {
  constructor(
    private readonly store: Store,
    private readonly models: JunkModels,
    private readonly blocklists: Blocklists,
    private readonly config: JunkSettings,
    private readonly logger: Logger,
  ) {}

  /** The blocklist lookups of a client address, given up (null) when the filter's time is up. */
  async screen(clientAddress: string): Promise<BlocklistAnswer | null> {
    if (!this.blocklists.enabled) return NOT_LISTED;
    let timer: NodeJS.Timeout | undefined;
    const timedOut = new Promise<null>((resolve) => {
      timer = setTimeout(() => resolve(null), this.config.timeoutMs);
    });
    try {
      return await Promise.race([this.blocklists.lookup(clientAddress), timedOut]);
    } finally {
      clearTimeout(timer);
    }
  }

  async judge(mailbox: MailboxRecord, evidence: JunkEvidence): Promise<JunkVerdict> {
    if (evidence.blocklists === null) return this.failed(`the blocklist lookups took longer than ${this.config.timeoutMs} ms`);
    try {
      const trust = evidence.authentication?.trust ?? 'unverified';
      const reasons = [
        await this.statistics(mailbox, evidence.features),
        ...(evidence.from === null ? [] : await this.senderReasons(mailbox, evidence.from, trust)),
        authenticationReason(evidence.authentication),
        ...blocklistReasons(evidence.blocklists, this.config.blocklistPoints),
      ].filter((reason): reason is JunkReason => reason !== null);
      const score = round(reasons.reduce((sum, reason) => sum + reason.points, 0));
      return { junk: score >= this.config.threshold, score, threshold: this.config.threshold, reasons };
    } catch (error) {
      const message = error instanceof Error ? error.message : String(error);
      this.logger.warn('the junk filter failed; the message goes to INBOX', { mailbox: mailbox.id, error: message });
      return this.failed(`the junk filter failed: ${message}`);
    }
  }

  /** A verdict for a message the filter could not judge: not junk, with why. */
  failed(why: string): JunkVerdict {
    return { junk: false, score: 0, threshold: this.config.threshold, reasons: [], failed: why };
  }

  private async statistics(mailbox: MailboxRecord, features: Int32Array | undefined): Promise<JunkReason | null> {
    if (!features || features.length === 0) return null;
    const own = await this.store.junk.modelOfMailbox(mailbox.id);
    const server = await this.store.junk.model(SERVER_MODEL_ID);
    const model = this.isMature(own) ? own : this.isMature(server) ? server : null;
    if (model === null) {
      const min = this.config.minJudgments;
      const detail = `not used yet: this mailbox has judged ${own?.junk ?? 0} messages junk and ${own?.ham ?? 0} not junk, and its model needs ${min} of each`;
      return { rule: 'statistics', points: 0, detail };
    }
    const probability = combine(await this.models.clues(model, features));
    const which = model === own ? "this mailbox's model" : 'the server-wide model';
    return {
      rule: 'statistics',
      points: round(STATISTICS_POINTS * (probability - 0.5)),
      detail: `${which} (${model.junk} junk and ${model.ham} not-junk judgments) rates it ${(probability * 100).toFixed(1)}% junk-like`,
    };
  }

  private isMature(model: JunkModel | null): model is JunkModel {
    return model !== null && model.ham >= this.config.minJudgments && model.junk >= this.config.minJudgments;
  }

  private async senderReasons(mailbox: MailboxRecord, from: string, trust: Trust): Promise<JunkReason[]> {
    const reasons: JunkReason[] = [];
    const how = trust === 'verified' ? 'authenticated' : 'unauthenticated';
    const correspondent = CORRESPONDENT_POINTS[trust];
    if (correspondent !== undefined && (await this.store.junk.hasWrittenTo(mailbox.accountId, from))) {
      reasons.push({ rule: 'correspondent', points: correspondent, detail: `this mailbox has written to ${from} (${how} sender)` });
    }
    const history = await this.store.junk.sender(mailbox.id, from);
    if (history && history.junk === 0 && HAM_SENDER_POINTS[trust] !== undefined) {
      const points = HAM_SENDER_POINTS[trust] as number;
      reasons.push({ rule: 'sender-history', points, detail: `this mailbox judged ${history.ham} earlier message(s) from ${from} not junk (${how} sender)` });
    } else if (history && history.ham === 0) {
      reasons.push({ rule: 'sender-history', points: JUNK_SENDER_POINTS, detail: `this mailbox judged ${history.junk} earlier message(s) from ${from} junk` });
    }
    return reasons;
  }
}

const authenticationReason = (verdict: AuthenticationVerdict | undefined): JunkReason | null => {
  const points = verdict ? AUTHENTICATION_POINTS[verdict.trust] : undefined;
  return verdict && points !== undefined ? { rule: 'authentication', points, detail: `the sender is ${verdict.trust}: ${verdict.reason}` } : null;
};

const blocklistReasons = (answer: BlocklistAnswer, points: number): JunkReason[] => [
  ...answer.listed.map((zone): JunkReason => ({ rule: 'blocklist', points, detail: `the sending server's address is listed in ${zone}` })),
  ...answer.unanswered.map((zone): JunkReason => ({ rule: 'blocklist', points: 0, detail: `${zone} did not answer for the sending server's address` })),
];

const round = (value: number): number => Math.round(value * 100) / 100;
