/**
 * A thread's replies, posted together at the end of the turn that finished them: one
 * postMessage (one structured clone, one wake-up of the main thread) for every result a
 * turn completes, rather than one each.
 */
export const perTurn = <R>(post: (results: R[]) => void): ((result: R) => void) => {
  let results: R[] = [];
  const flush = (): void => {
    const done = results;
    results = [];
    post(done);
  };
  return (result) => {
    if (results.length === 0) setImmediate(flush);
    results.push(result);
  };
};
