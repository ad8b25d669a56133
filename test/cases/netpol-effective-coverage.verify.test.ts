/**
 * Case netpol-effective-coverage (verifier side): for each sandbox pod, the union of the policies selecting it by its
 * real labels decides; an undeclared controller policy re-opening egress, or no policy at all, fails network isolation.
 */
import { networkPolicyView, podView } from '../../src/adapter/kubernetes/views.js';
import { declaredPolicies, podCoverage } from '../../src/verify/probes/network.js';
import type { VerifyPlan } from '../../src/verify/plan.js';

const pod = (labels: Record<string, string>) => ({ metadata: { namespace: 'sbx', name: 'py-pool-x1', labels } });
const dnsOnly = {
  metadata: { namespace: 'sbx', name: 'sbx-egress-dns-only' },
  spec: {
    podSelector: { matchLabels: { app: 'sandbox' } },
    policyTypes: ['Egress'],
    egress: [
      {
        ports: [{ protocol: 'UDP', port: 53 }],
        to: [{ namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': 'kube-system' } } }],
      },
    ],
  },
};
const managed = {
  metadata: { namespace: 'sbx', name: 'py-network-policy' },
  spec: {
    podSelector: { matchLabels: { 'agents.x-k8s.io/sandbox-template-ref-hash': 'abc' } },
    policyTypes: ['Ingress', 'Egress'],
    egress: [
      {
        to: [
          {
            ipBlock: { cidr: '0.0.0.0/0', except: ['10.0.0.0/8', '172.16.0.0/12', '192.168.0.0/16', '169.254.0.0/16'] },
          },
        ],
      },
    ],
  },
};
const plan = {
  templates: [{ namespace: 'sbx', name: 'py', networkPolicyManagement: 'Unmanaged' }],
  networkPolicies: [
    {
      namespace: 'sbx',
      name: 'sbx-egress-dns-only',
      template: 'py',
      allowedEgress: ['kube-system/{} UDP/53'],
      ingressFrom: [],
    },
  ],
} as unknown as VerifyPlan;

describe('case netpol-effective-coverage (verifier)', () => {
  test('our DNS-only policy plus the controller default policy: egress wider than declared', () => {
    const c = podCoverage(
      podView(pod({ app: 'sandbox', 'agents.x-k8s.io/sandbox-template-ref-hash': 'abc' })),
      [dnsOnly, managed].map(networkPolicyView),
      declaredPolicies(plan),
    );
    expect(c.selectedBy).toEqual(['sbx-egress-dns-only', 'py-network-policy']);
    expect(c.problems.map((p) => [p.field, p.value])).toEqual([
      [
        'NetworkPolicy/py-network-policy egress',
        '0.0.0.0/0 except 10.0.0.0/8, 172.16.0.0/12, 192.168.0.0/16, 169.254.0.0/16 on all ports',
      ],
    ]);
  });

  test('variant: v0.5.0 warm-pool pods without the template-ref-hash label are selected by no (managed) policy', () => {
    const managedOnly = {
      ...plan,
      templates: [{ namespace: 'sbx', name: 'py', networkPolicyManagement: 'Managed' }],
      networkPolicies: [],
    } as unknown as VerifyPlan;
    const c = podCoverage(
      podView(pod({ 'agents.x-k8s.io/warm-pool-sandbox': 'f00' })),
      [managed].map(networkPolicyView),
      declaredPolicies(managedOnly),
    );
    expect(c.problems.map((p) => [p.field, p.value])).toEqual([['selecting policies', 'none']]);
  });

  test('only the declared policy selects the pod: no problem', () => {
    const c = podCoverage(
      podView(pod({ app: 'sandbox' })),
      [dnsOnly, managed].map(networkPolicyView),
      declaredPolicies(plan),
    );
    expect(c).toEqual({ selectedBy: ['sbx-egress-dns-only'], problems: [] });
  });
});
