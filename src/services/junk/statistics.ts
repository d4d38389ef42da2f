/**
 * The statistical part of the junk filter: Gary Robinson's per-feature probability and
 * Fisher's chi-square combining, as SpamBayes, bogofilter and rspamd's Bayes classifier do it
 * ("A Statistical Approach to the Spam Problem", Linux Journal 107, 2003).
 */

/** How strongly a feature seen in few judged messages is pulled toward 0.5 (SpamBayes's unknown_word_strength). */
const PRIOR_STRENGTH = 0.45;
const PRIOR = 0.5;
/** Features closer than this to 0.5 say nothing and are left out (SpamBayes's minimum_prob_strength). */
const MIN_STRENGTH = 0.1;
/** The most telling features a verdict combines; more than a message usually has. */
const MAX_CLUES = 1000;

/** What a model knows: how many judged-ham and judged-junk messages trained it. */
export interface ModelSize {
  ham: number;
  junk: number;
}

/**
 * The probability that a message with this feature is junk: the share of junk among the
 * messages that had it, each class weighed by its own size, pulled toward 0.5 when the
 * feature was seen rarely (Robinson's f(w)).
 */
export const featureProbability = (ham: number, junk: number, size: ModelSize): number => {
  const hamRate = size.ham === 0 ? 0 : ham / size.ham;
  const junkRate = size.junk === 0 ? 0 : junk / size.junk;
  const seen = ham + junk;
  if (hamRate + junkRate === 0) return PRIOR;
  const p = junkRate / (hamRate + junkRate);
  return (PRIOR_STRENGTH * PRIOR + seen * p) / (PRIOR_STRENGTH + seen);
};

/** Whether a feature's probability tells anything. */
export const isClue = (probability: number): boolean => Math.abs(probability - 0.5) >= MIN_STRENGTH;

/** Past this, e^-m underflows a double and the series is summed in log space. */
const DIRECT_SERIES_MAX = 700;

/**
 * The chance that a chi-square variable with `degrees` degrees of freedom (even) exceeds `x2`:
 * the series summed directly while e^-m is a normal double, else in log space, so that a
 * message with hundreds of clues does not underflow to 0.
 */
export const chi2Q = (x2: number, degrees: number): number => {
  const m = x2 / 2;
  if (m <= 0) return 1;
  if (m < DIRECT_SERIES_MAX) {
    let term = Math.exp(-m);
    let sum = term;
    for (let i = 1; i < degrees / 2; i++) {
      term *= m / i;
      sum += term;
    }
    return Math.min(1, sum);
  }
  const logM = Math.log(m);
  let term = -m;
  let sum = term;
  for (let i = 1; i < degrees / 2; i++) {
    term += logM - Math.log(i);
    sum = sum > term ? sum + Math.log1p(Math.exp(term - sum)) : term + Math.log1p(Math.exp(sum - term));
  }
  return Math.min(1, Math.exp(sum));
};

/**
 * Fisher's combining of the clues' probabilities: how unlike ham (S) and how unlike junk (H)
 * the message is, as (1 + S - H) / 2 in [0, 1]; 0.5 when there are no clues, or when both
 * sides are strong (a message that looks like both is unsure, not junk).
 */
export const combine = (clues: number[]): number => {
  if (clues.length === 0) return 0.5;
  const used = clues.length > MAX_CLUES ? strongest(clues) : clues;
  let logJunk = 0;
  let logHam = 0;
  for (const p of used) {
    logHam += Math.log(p);
    logJunk += Math.log(1 - p);
  }
  const junkness = 1 - chi2Q(-2 * logJunk, 2 * used.length);
  const hamness = 1 - chi2Q(-2 * logHam, 2 * used.length);
  return (1 + junkness - hamness) / 2;
};

const strongest = (clues: number[]): number[] => [...clues].sort((a, b) => Math.abs(b - 0.5) - Math.abs(a - 0.5)).slice(0, MAX_CLUES);
