import { mapLimit } from '../../../src/model/arrays.js';

/** A call that resolves when the test says so, recording how many calls run at once. */
function gate() {
  let running = 0;
  let peak = 0;
  const pending: Array<() => void> = [];
  const fn = async (x: number): Promise<number> => {
    running += 1;
    peak = Math.max(peak, running);
    await new Promise<void>((r) => pending.push(r));
    running -= 1;
    return x * 10;
  };
  return { fn, pending, peak: () => peak };
}

test('results come in item order with at most `limit` calls at once, a new one as soon as one ends', async () => {
  const g = gate();
  const done = mapLimit([1, 2, 3, 4, 5], 2, g.fn);
  for (let i = 0; i < 5; i++) {
    await new Promise((r) => setImmediate(r));
    expect(g.pending.length).toBe(i < 4 ? 2 : 1);
    g.pending.shift()!();
  }
  expect(await done).toEqual([10, 20, 30, 40, 50]);
  expect(g.peak()).toBe(2);
});

test('a rejection rejects the whole call and starts no further call', async () => {
  const started: number[] = [];
  const out = mapLimit([1, 2, 3, 4], 1, async (x) => {
    started.push(x);
    if (x === 2) throw new RangeError('no');
    return x;
  });
  await expect(out).rejects.toBeInstanceOf(RangeError);
  expect(started).toEqual([1, 2]);
});

test('an empty list and a limit above the length', async () => {
  expect(await mapLimit([], 4, async (x: number) => x)).toEqual([]);
  expect(await mapLimit([1, 2], 8, async (x) => x + 1)).toEqual([2, 3]);
});
