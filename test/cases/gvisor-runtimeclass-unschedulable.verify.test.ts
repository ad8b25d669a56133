/**
 * Case 12 (verifier side): gVisor moves to `compatible` only when a Ready node matches the RuntimeClass scheduling;
 * three nodes, only node-b has the handler label. The real scheduler/admission path is in
 * test/cluster/verify/verify-runtime-class.test.ts.
 */
import { nodesFor } from '../../src/verify/probes/runtime-class.js';

const node = (name: string, labels: Record<string, string> = {}) => ({ metadata: { name, labels }, spec: {}, status: { conditions: [{ type: 'Ready', status: 'True' }] } });

describe('case 12 gvisor-runtimeclass-unschedulable (verifier)', () => {
  test('a class without scheduling matches every node, including those without the handler (what the construct forbids)', () => {
    const fits = nodesFor({ metadata: { name: 'gvisor' }, handler: 'runsc' } as never, [node('node-a'), node('node-b', { 'agentplane.dev/runsc': 'true' }), node('node-c')] as never);
    expect(fits.filter((f) => f.fits).map((f) => f.node)).toEqual(['node-a', 'node-b', 'node-c']);
  });

  test('with scheduling only node-b is compatible, and the others say why', () => {
    const rc = { metadata: { name: 'gvisor' }, handler: 'runsc', scheduling: { nodeSelector: { 'agentplane.dev/runsc': 'true' } } };
    expect(nodesFor(rc as never, [node('node-a'), node('node-b', { 'agentplane.dev/runsc': 'true' }), node('node-c')] as never)).toEqual([
      { node: 'node-a', fits: false, reason: 'lacks label agentplane.dev/runsc=true' },
      { node: 'node-b', fits: true, reason: 'Ready and matches' },
      { node: 'node-c', fits: false, reason: 'lacks label agentplane.dev/runsc=true' },
    ]);
  });
});
