/**
 * readLiveSets: which reader errors leave one object out and which stop the comparison. The reader here is an
 * in-memory stand-in because the point is the error policy; the same path on the real API server (a missing namespace,
 * a 422) is test/cluster/diff-live.test.ts.
 */
import { LiveObjectError, readLiveSets, type LiveReader } from '../../../src/diff/index.js';
import type { KubeObject } from '../../../src/releases/index.js';

const cm = (name: string): KubeObject => ({
  apiVersion: 'v1',
  kind: 'ConfigMap',
  metadata: { name, namespace: 'sbx' },
  data: { k: name },
});

function reader(fail: Record<string, Error>): LiveReader {
  return {
    label: 'live (stand-in)',
    async get(obj) {
      return obj.metadata?.name === 'new' ? undefined : obj;
    },
    async dryRunApply(obj) {
      const err = fail[String(obj.metadata?.name)];
      if (err) throw err;
      return obj;
    },
  };
}

test('an object the reader refuses with LiveObjectError is left out of both sides and listed; the others are read', async () => {
  const desired = { label: 'dist/sbx', objects: [cm('a'), cm('bad'), cm('new'), cm('b')] };
  const refusal = new LiveObjectError('server-side dry run of ConfigMap sbx/bad: invalid', 'fix it');
  const r = await readLiveSets(desired, reader({ bad: refusal }), 2);
  expect(r.base.objects.map((o) => o.metadata?.name)).toEqual(['a', 'b']);
  expect(r.head.objects.map((o) => o.metadata?.name)).toEqual(['a', 'new', 'b']);
  expect(r.unreadable).toEqual([{ object: 'ConfigMap sbx/bad', message: refusal.message, hint: refusal.hint }]);
  expect([r.base.label, r.head.label]).toEqual(['live (stand-in)', 'dist/sbx (server-side dry run)']);
});

test('any other error stops the comparison', async () => {
  const desired = { label: 'dist/sbx', objects: [cm('a'), cm('down')] };
  const down = new Error('cannot reach the API server');
  await expect(readLiveSets(desired, reader({ down }))).rejects.toBe(down);
});
