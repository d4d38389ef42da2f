// Counts a tap run from its raw TAP stream (TAP version 14, as `tap --output-file` saves it),
// not from a reporter's text: the counts then cannot drift from what tap decided.
//
// A leaf test point counts as passed, failed or skipped (`# SKIP` and `# TODO` both count as
// skipped). A subtest (a test file, a t.test) counts through its children, with two rules:
//   - a subtest that ends `not ok` while none of its children failed (a crash, a non-zero
//     exit, a timeout, a missed plan) counts as one failure itself;
//   - a subtest marked SKIP or TODO counts as one skipped, whatever its children did, because
//     tap does not fail a run on them either.
// The run's exit code is the last word: a non-zero exit with no failure counted, or a run in
// which nothing passed, counts one failure, so the closing line always agrees with it.
import { Parser } from 'tap-parser';

const zero = () => ({ passed: 0, failed: 0, skipped: 0, reasons: [] });

const add = (into, from) => {
  into.passed += from.passed;
  into.failed += from.failed;
  into.skipped += from.skipped;
  into.reasons.push(...from.reasons);
};

/** Listens to one parser (the root or a subtest's); the returned counts fill as it parses. */
const watch = (parser, path) => {
  const counts = zero();
  let child; // the counts of the subtest whose closing test point comes next
  parser.on('child', (sub) => {
    child = watch(sub, sub.name ? [...path, sub.name] : path);
  });
  parser.on('assert', (point) => {
    const sub = child;
    child = undefined;
    const name = [...path, point.name].filter(Boolean).join(' > ');
    if (point.todo || point.skip) {
      counts.skipped += 1;
    } else if (!sub) {
      if (point.ok) counts.passed += 1;
      else {
        counts.failed += 1;
        counts.reasons.push(name);
      }
    } else {
      add(counts, sub);
      if (!point.ok && sub.failed === 0) {
        counts.failed += 1;
        counts.reasons.push(`${name}${exitOf(point)}`);
      }
    }
  });
  parser.on('bailout', (reason) => {
    counts.failed += 1;
    counts.reasons.push(`bail out: ${reason}`);
  });
  return counts;
};

/** tap's YAML block on a failed file names its exit code or signal. */
const exitOf = (point) => {
  const diag = point.diag ?? {};
  if (diag.signal) return ` (killed by ${diag.signal})`;
  if (diag.exitCode) return ` (exit code ${diag.exitCode})`;
  return '';
};

/**
 * @param {string} tap the raw TAP of the whole run
 * @param {number} exitCode tap's exit code
 * @returns {{passed: number, failed: number, skipped: number, reasons: string[]}}
 */
export const countTap = (tap, exitCode) => {
  const parser = new Parser();
  const counts = watch(parser, []);
  let final;
  parser.on('complete', (result) => {
    final = result;
  });
  parser.end(tap);
  // Errors of the stream itself (no plan, a count that misses the plan), not of a test point.
  for (const failure of final?.failures ?? []) {
    if (!failure.tapError) continue;
    counts.failed += 1;
    counts.reasons.push(`TAP stream: ${failure.tapError}`);
  }
  if (exitCode !== 0 && counts.failed === 0) {
    counts.failed += 1;
    counts.reasons.push(`tap exited with code ${exitCode}`);
  }
  if (counts.passed === 0 && counts.failed === 0) {
    counts.failed += 1;
    counts.reasons.push('no test ran');
  }
  return counts;
};
