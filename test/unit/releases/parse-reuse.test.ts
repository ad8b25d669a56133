import { loadRelease } from '../../../src/releases/index.js';
import { SHARED_MIRROR, tempDir } from './helpers.js';

test('a second load hands out equal but independent objects (the parse is shared; its speed-up is a benchmark matter)', async () => {
  const cache = tempDir('cache');
  try {
    const first = await loadRelease('v0.5.0', { mirror: SHARED_MIRROR, cacheDir: cache.dir });
    const second = await loadRelease('v0.5.0', { mirror: SHARED_MIRROR, cacheDir: cache.dir });
    const path = 'k8s/controller.yaml';
    expect(second.objects.get(path)).toEqual(first.objects.get(path));
    (first.objects.get(path)![0]!.metadata as Record<string, unknown>).name = 'mutated';
    expect(second.objects.get(path)![0]!.metadata?.name).toBe('agent-sandbox-system');
  } finally {
    cache.cleanup();
  }
});
