import { BACKOFF_CAP_MS, backoffMs } from '../../../src/adapter/kubernetes/cluster.js';

test('re-open delays double from 1 s with jitter in the upper half, capped', () => {
  expect([1, 2, 3].map((a) => backoffMs(a, () => 0))).toEqual([500, 1000, 2000]);
  expect([1, 2, 3].map((a) => backoffMs(a, () => 1))).toEqual([1000, 2000, 4000]);
  expect(backoffMs(30, () => 1)).toBe(BACKOFF_CAP_MS);
  // Mean of the first ten gaps: far below one request per second on average.
  const mean = Array.from({ length: 10 }, (_, i) => backoffMs(i + 1, () => 0.5)).reduce((a, b) => a + b, 0) / 10;
  expect(mean).toBeGreaterThan(1000);
});
