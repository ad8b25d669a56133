import { loadRelease } from '../../../src/releases/index.js';
import { SHARED_MIRROR, tempDir } from './helpers.js';

test('a second load reuses the parse but hands out independent objects', async () => {
  const cache = tempDir('cache');
  try {
    const t0 = performance.now();
    // v0.5.0 is loaded by no other test in this file's process, so this is a first (parsing) load
    const first = await loadRelease('v0.5.0', { mirror: SHARED_MIRROR, cacheDir: cache.dir });
    const firstMs = performance.now() - t0;
    const started = performance.now();
    const second = await loadRelease('v0.5.0', { mirror: SHARED_MIRROR, cacheDir: cache.dir });
    const secondMs = performance.now() - started;
    const path = 'k8s/controller.yaml';
    expect(second.objects.get(path)).toEqual(first.objects.get(path));
    (first.objects.get(path)![0]!.metadata as Record<string, unknown>).name = 'mutated';
    expect(second.objects.get(path)![0]!.metadata?.name).toBe('agent-sandbox-system');
    // measured: ~1 s for the first load (two 400 KB CRDs to parse), ~0.1 s for the second
    expect(secondMs).toBeLessThan(firstMs / 2);
  } finally {
    cache.cleanup();
  }
});
