import { defaultConfig } from '../src/config/defaults.js';
import type { DnsResolver } from '../src/core/dns.js';
import { createLogger } from '../src/core/logger.js';
import { junkFeatures } from '../src/mime/junk-tokens.js';
import { parseMimeTree } from '../src/mime/mime-tree.js';
import { parseMessage } from '../src/mime/parse.js';
import { Blocklists, NOT_LISTED } from '../src/services/junk/blocklists.js';
import { JunkFilter } from '../src/services/junk/filter.js';
import { JunkModels } from '../src/services/junk/models.js';
import { combine, featureProbability, isClue } from '../src/services/junk/statistics.js';
import { Store } from '../src/store/index.js';
import type { CorpusMessage } from './junk-corpus.js';

/** Microseconds of CPU per message of each step of a verdict, measured in this process on the server's own database. */
export interface ScoringCost {
  /** The features, as a parse worker computes them after its parse. */
  featuresUs: number;
  /** The verdict on the main thread with the mailbox's model held in memory. */
  verdictUs: number;
  /** The statistics with the model read from SQLite instead (a model not in memory yet). */
  sqliteUs: number;
}

const NO_DNS = {} as DnsResolver;

/**
 * Opens the running server's database (WAL: readers do not disturb its writer), takes the
 * fold's mailbox and times the filter's steps on the fold's test messages after a first round
 * (which loads the model and warms the code).
 */
export const measureScoring = async (dataFile: string, email: string, messages: readonly CorpusMessage[]): Promise<ScoringCost> => {
  const store = Store.open(dataFile);
  try {
    const mailbox = await store.accounts.mailboxByAddress(email);
    const model = mailbox && (await store.junk.modelOfMailbox(mailbox.id));
    if (!mailbox || !model) throw new Error(`no trained mailbox ${email}`);
    const parsed = await Promise.all(messages.map((message) => parseMessage(message.raw, { junkFeatures: true })));
    const trees = messages.map((message) => parseMimeTree(message.raw));
    // CPU time, not wall time (the machine is shared), the least of three runs after a warm-up (a collection may land in one).
    const timeOf = async (work: () => unknown): Promise<number> => {
      await work();
      const runs: number[] = [];
      for (let run = 0; run < 3; run++) {
        const started = process.cpuUsage();
        await work();
        const used = process.cpuUsage(started);
        runs.push((used.user + used.system) / messages.length);
      }
      return Math.min(...runs);
    };
    const featuresUs = await timeOf(() => parsed.forEach((one, i) => one.body && junkFeatures(trees[i].headers, one.body.structure.root, one)));
    const logger = createLogger('silent', () => {});
    const models = new JunkModels(store, logger, defaultConfig().junk.cacheMegabytes * 1024 * 1024);
    const filter = new JunkFilter(store, models, new Blocklists(NO_DNS, []), defaultConfig().junk, logger);
    const judgeAll = async () => {
      for (const one of parsed) {
        await filter.judge(mailbox, {
          features: one.junkFeatures,
          from: one.from?.email.toLowerCase() ?? null,
          authentication: undefined,
          blocklists: NOT_LISTED,
        });
      }
    };
    await judgeAll();
    // The model loads a page per turn of the event loop.
    while (!models.isHeld(model.id)) await new Promise((resolve) => setTimeout(resolve, 50));
    const verdictUs = await timeOf(judgeAll);
    const sqliteUs = await timeOf(async () => {
      for (const one of parsed) {
        const counts = await store.junk.counts(model.id, one.junkFeatures ?? new Int32Array(0));
        combine(counts.map(([, ham, junk]) => featureProbability(ham, junk, model)).filter(isClue));
      }
    });
    return { featuresUs, verdictUs, sqliteUs };
  } finally {
    store.close();
  }
};
