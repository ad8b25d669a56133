/** Array helpers for inputs of any size. */

/**
 * Appends every item of `items` to `into` and returns `into`. Unlike `into.push(...items)`, which passes each item as a
 * call argument, it does not overflow the call stack on large inputs (a 200,000-object manifest file).
 */
export function appendAll<T>(into: T[], items: Iterable<T>): T[] {
  for (const item of items) into.push(item);
  return into;
}
