import { cniFromNodeAnnotations } from '../../../src/verify/tuple-reader.js';

const node = (annotations: Record<string, string>) => ({ meta: { annotations } });

describe('cniFromNodeAnnotations', () => {
  test('names the CNIs whose node agents annotated nodes, with how many nodes', () => {
    expect(
      cniFromNodeAnnotations([
        node({ 'projectcalico.org/IPv4Address': '10.0.0.4/24' }),
        node({ 'projectcalico.org/IPv4Address': '10.0.0.5/24', 'flannel.alpha.coreos.com/backend-type': 'vxlan' }),
        node({}),
      ]),
    ).toEqual(['calico (2/3 node(s))', 'flannel (1/3 node(s))']);
  });

  test("the real node's annotations (kubelet's only) and kwok's name no CNI", () => {
    expect(
      cniFromNodeAnnotations([
        node({ 'volumes.kubernetes.io/controller-managed-attach-detach': 'true' }),
        node({ 'kwok.x-k8s.io/node': 'fake' }),
      ]),
    ).toEqual([]);
  });
});
