// The closing line a reader (or CI) looks for: "N passed, N failed[, N skipped]", after one
// "failed: <what>" line per failure. Needs no package, so `npm test` can report even when
// node_modules lacks one.

export const closingLine = ({ passed, failed, skipped }) => `${passed} passed, ${failed} failed${skipped ? `, ${skipped} skipped` : ''}`;

/** Prints the failures and the closing line; returns the exit code that agrees with it. */
export const report = (counts) => {
  for (const reason of counts.reasons.slice(0, 20)) process.stdout.write(`failed: ${reason}\n`);
  if (counts.reasons.length > 20) process.stdout.write(`failed: ... and ${counts.reasons.length - 20} more\n`);
  process.stdout.write(`${closingLine(counts)}\n`);
  return counts.failed > 0 ? 1 : 0;
};
