/**
 * Array helpers whose callback awaits (the store answers promises): one element at a time, in
 * order, as the synchronous Array methods did, so a unit of work reads and writes in the same
 * order it always did.
 */
export const filterInOrder = async <T>(items: readonly T[], keep: (item: T) => Promise<boolean>): Promise<T[]> => {
  const kept: T[] = [];
  for (const item of items) if (await keep(item)) kept.push(item);
  return kept;
};

export const someInOrder = async <T>(items: readonly T[], test: (item: T) => Promise<boolean>): Promise<boolean> => {
  for (const item of items) if (await test(item)) return true;
  return false;
};

export const sumInOrder = async <T>(items: readonly T[], amountOf: (item: T) => Promise<number>): Promise<number> => {
  let sum = 0;
  for (const item of items) sum += await amountOf(item);
  return sum;
};
