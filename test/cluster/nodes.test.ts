/** The node options of cluster:up (`--node-labels`, `--node-taints`) and the kwok Node objects made from them (test-cluster/nodes.ts). */
import { kwokNode, NodeFlagError, parseLabels, parseTaints } from '../../test-cluster/nodes.js';
import { thrownBy } from '../unit/thrown.js';

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
  const flag = (fn: () => unknown) => {
    const e = thrownBy(fn, NodeFlagError, 'NodeFlagInvalid');
    return [e.flag, e.value];
  };
  expect(flag(() => parseLabels('zone'))).toEqual(['label', 'zone']);
  expect(flag(() => parseTaints('a=b:Sometimes'))).toEqual(['taint', 'a=b:Sometimes']);
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
  expect(thrownBy(() => kwokNode('n', 255), NodeFlagError, 'NodeFlagInvalid')).toMatchObject({
    flag: 'index',
    value: '255',
  });
  expect(thrownBy(() => kwokNode('n', 0, {}, [], 0), NodeFlagError, 'NodeFlagInvalid')).toMatchObject({
    flag: 'podNet',
    value: '0',
  });
});
