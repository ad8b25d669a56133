/**
 * Case netpol-effective-coverage on the cluster: the environment declares its own DNS-only egress policy for the
 * template's pods (so synth would write the template Unmanaged), but the live template is Managed, so the real
 * controller also creates `<template>-network-policy` allowing 0.0.0.0/0 minus private ranges. The verifier looks at
 * the probe pod's real labels, finds both policies selecting it and keeps network isolation below configured: "egress
 * wider than declared". Enforcement cannot be observed on kwok nodes (no pod network: the runtimes are stand-ins on
 * the host at loopback pod IPs), so the enforcement test says it cannot be made and verified stays unknown.
 */
import * as k8s from '@kubernetes/client-node';
import { KubeClient } from '../../../src/adapter/kubernetes/client.js';
import { runVerify } from '../../../src/verify/index.js';
import { requirementsFor } from '../../../src/verify/requirements.js';
import { connect, freshNamespace, waitFor, type Cluster } from '../helpers.js';
import { EXT, plan, sandboxdTemplate } from './verifier-env.js';

let c: Cluster;
let ns: string;

beforeAll(async () => {
  c = connect();
  ns = await freshNamespace(c, 'vfynp');
  await c.custom.createNamespacedCustomObject({
    ...EXT,
    namespace: ns,
    plural: 'sandboxtemplates',
    body: sandboxdTemplate(ns, 'py', 'sandboxd'),
  });
  await c.kc.makeApiClient(k8s.NetworkingV1Api).createNamespacedNetworkPolicy({
    namespace: ns,
    body: {
      metadata: { name: 'sbx-egress-dns-only' },
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
    },
  });
  await waitFor('controller-made py-network-policy', 30_000, async () => {
    const list = await c.kc.makeApiClient(k8s.NetworkingV1Api).listNamespacedNetworkPolicy({ namespace: ns });
    return list.items.some((p) => p.metadata?.name === 'py-network-policy') ? true : undefined;
  });
}, 60_000);

test('a controller policy the environment did not declare also selects the pod: egress wider than declared', async () => {
  const p = plan(
    c,
    [
      {
        namespace: ns,
        name: 'py',
        runtime: 'sandboxd',
        ports: { rest: 8080, grpc: 9090 },
        networkPolicyManagement: 'Unmanaged',
      },
    ],
    {
      networkPolicies: [
        {
          namespace: ns,
          name: 'sbx-egress-dns-only',
          template: 'py',
          allowedEgress: ['kube-system UDP/53'],
          ingressFrom: [],
        },
      ],
      requirements: requirementsFor(['network-isolation', `template/${ns}/py`]),
    },
  );
  const { report } = await runVerify({
    plan: p,
    client: KubeClient.connect({ kubeconfig: c.info.kubeconfig }),
    controllerMode: 'external',
    progress: () => undefined,
  });
  const net = report.capabilities.find((r) => r.name === 'network-isolation')!;
  expect(net.state).toBe('compatible');
  expect(net.nextReason).toBe('PolicyCoverageGap');
  const gap = net.evidence.find((e) => e.reason === 'PolicyCoverageGap')!;
  expect([gap.step, gap.verdict, gap.field]).toEqual([
    'configured',
    'missing',
    'NetworkPolicy/py-network-policy egress',
  ]);
  expect(gap.value).toMatch(
    /^0\.0\.0\.0\/0 except 10\.0\.0\.0\/8, 172\.16\.0\.0\/12, 192\.168\.0\.0\/16, 169\.254\.0\.0\/16 on /,
  );
  expect(gap.subject).toMatch(new RegExp(`^pod ${ns}/verify-\\w+-p-py-\\w+$`));
  const t = report.capabilities.find((r) => r.name === `template/${ns}/py`)!;
  const mgmt = t.evidence.find((e) => e.reason === 'NetworkPolicyManagementDiffers')!;
  expect([mgmt.step, mgmt.verdict, mgmt.field, mgmt.value]).toEqual([
    'configured',
    'missing',
    'spec.networkPolicyManagement',
    'Managed',
  ]);
  expect(report.leftovers).toEqual([]);
}, 180_000);

test('with the declared set-up (Managed, no own policy) coverage holds: configured; kwok pods leave enforcement untestable', async () => {
  await c.kc
    .makeApiClient(k8s.NetworkingV1Api)
    .deleteNamespacedNetworkPolicy({ namespace: ns, name: 'sbx-egress-dns-only' });
  await c.custom.createNamespacedCustomObject({
    ...EXT,
    namespace: ns,
    plural: 'sandboxtemplates',
    body: sandboxdTemplate(ns, 'py2', 'sandboxd'),
  });
  const managed = (name: string) =>
    ({
      namespace: ns,
      name,
      runtime: 'sandboxd',
      ports: { rest: 8080, grpc: 9090 },
      networkPolicyManagement: 'Managed',
    }) as const;
  const p = plan(c, [managed('py'), managed('py2')], { requirements: requirementsFor(['network-isolation']) });
  const { report } = await runVerify({
    plan: p,
    client: KubeClient.connect({ kubeconfig: c.info.kubeconfig }),
    controllerMode: 'external',
    progress: () => undefined,
  });
  const net = report.capabilities.find((r) => r.name === 'network-isolation')!;
  expect(net.state).toBe('configured');
  expect(net.met).toBe(true);
  expect(net.nextReason).toBe('EnforcementNotTestable');
  // Two probe sandboxes answered, but at loopback pod IPs: no fresh peer was made, nothing dialled, nothing verified.
  const enforcement = net.evidence.filter((e) => e.step === 'verified');
  expect(enforcement.map((e) => [e.verdict, e.reason, e.field])).toEqual([
    ['unknown', 'EnforcementNotTestable', 'pod IP'],
  ]);
  expect(enforcement[0]!.value).toMatch(/^127\./);
  expect(enforcement[0]!.missingTest).toMatch(/^netpol-enforcement-probe: /);
  expect(report.leftovers).toEqual([]);
}, 180_000);
