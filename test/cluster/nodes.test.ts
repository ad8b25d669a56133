/** The node options of cluster:up (`--node-labels`, `--node-taints`) and the kwok Node objects made from them (test-cluster/nodes.ts). */
import { kwokNode, parseLabels, parseTaints } from '../../test-cluster/nodes.js';

test('labels and taints parse from the command-line form', () => {
  expect(parseLabels('sandbox.gke.io/runtime=gvisor, zone=a')).toEqual({
    'sandbox.gke.io/runtime': 'gvisor',
    zone: 'a',
  });
  expect(parseLabels('')).toEqual({});
  expect(parseTaints('sandbox.gke.io/runtime=gvisor:NoSchedule,dedicated:NoExecute')).toEqual([
    { key: 'sandbox.gke.io/runtime', value: 'gvisor', effect: 'NoSchedule' },
    { key: 'dedicated', effect: 'NoExecute' },
  ]);
});

test('malformed labels and taints are refused with the offending entry', () => {
  expect(() => parseLabels('zone')).toThrow('node label "zone" is not key=value');
  expect(() => parseTaints('a=b:Sometimes')).toThrow(
    'node taint "a=b:Sometimes" is not key[=value]:NoSchedule|PreferNoSchedule|NoExecute',
  );
});

test('kwok nodes get a loopback pod CIDR from their index and the cluster pod net', () => {
  const node = kwokNode('n', 7, { a: 'b' }, [{ key: 'k', effect: 'NoSchedule' }], 42) as unknown as {
    metadata: { annotations: Record<string, string>; labels: Record<string, string> };
    spec: { podCIDR: string; taints: unknown[] };
  };
  expect(node.spec.podCIDR).toBe('127.42.7.0/24');
  expect(node.metadata.annotations).toEqual({ 'kwok.x-k8s.io/node': 'fake' });
  expect(node.metadata.labels).toEqual({ 'kubernetes.io/hostname': 'n', type: 'kwok', a: 'b' });
  expect(node.spec.taints).toEqual([{ key: 'k', effect: 'NoSchedule' }]);
  expect(() => kwokNode('n', 255)).toThrow('node index 255 out of range 0..254');
  expect(() => kwokNode('n', 0, {}, [], 0)).toThrow('podNet 0 out of range 1..254');
});
