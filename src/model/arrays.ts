/** Array helpers for inputs of any size. */

/**
 * Appends every item of `items` to `into` and returns `into`. Unlike `into.push(...items)`, which passes each item as a
 * call argument, it does not overflow the call stack on large inputs (a 200,000-object manifest file).
 */
export function appendAll<T>(into: T[], items: Iterable<T>): T[] {
  for (const item of items) into.push(item);
  return into;
}

/**
 * `fn` applied to every item, at most `limit` calls running at once (a call starts as soon as one ends); the results
 * in item order. Rejects with the first rejection, after which no new call starts.
 */
export async function mapLimit<T, R>(
  items: readonly T[],
  limit: number,
  fn: (item: T, index: number) => Promise<R>,
): Promise<R[]> {
  const out = new Array<R>(items.length);
  let next = 0;
  let failed = false;
  const worker = async (): Promise<void> => {
    while (!failed && next < items.length) {
      const i = next++;
      try {
        out[i] = await fn(items[i]!, i);
      } catch (err) {
        failed = true;
        throw err;
      }
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(limit, items.length)) }, worker));
  return out;
}
