/**
 * Case netpol-router-peer-mismatch, verifier side, on the cluster: whether a template's
 * policies admit the router comes from the live NetworkPolicies and the live router pods, never from the descriptor.
 * The real controller makes the Managed template's default policy (peer: namespace agent-sandbox-system + label
 * `app: sandbox-router`); the router pod runs with the shipped labels (`app.kubernetes.io/name: sandbox-router`) in
 * another namespace. The router itself is a local process in the test cluster: its pod here is a kwok pod standing in
 * for its identity (namespace, labels), which is all admission reads. NetworkPolicies are stored, not enforced, on kwok
 * nodes; the check is of what they say.
 */
import * as k8s from '@kubernetes/client-node';
import { Cluster as ApiCluster } from '../../../src/adapter/kubernetes/cluster.js';
import { KubeClient } from '../../../src/adapter/kubernetes/client.js';
import { releaseFacts } from '../../../src/releases/index.js';
import type { Evidence } from '../../../src/verify/evidence.js';
import type { NetworkPolicyPlan, RouterPlan, TemplatePlan } from '../../../src/verify/plan.js';
import { routerProbe } from '../../../src/verify/probes/router.js';
import { AdapterRuntimeProber } from '../../../src/verify/runtime-prober.js';
import { settle } from '../../../src/verify/states.js';
import { Workload } from '../../../src/verify/workload.js';
import { connect, freshNamespace, waitFor, type Cluster } from '../helpers.js';
import { EXT, plan, sandboxdTemplate } from '../verify/verifier-env.js';

const SHIPPED_LABELS = { 'app.kubernetes.io/name': 'sandbox-router' };

let c: Cluster;
let ns: string;
let routerNs: string;
let net: k8s.NetworkingV1Api;

function policy(name: string, peerNs: string, peerLabels: Record<string, string>, podLabels: Record<string, string>) {
  return {
    metadata: { name },
    spec: {
      podSelector: { matchLabels: podLabels },
      policyTypes: ['Ingress'],
      ingress: [
        {
          _from: [
            {
              namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': peerNs } },
              podSelector: { matchLabels: peerLabels },
            },
          ],
          ports: [{ protocol: 'TCP', port: 8080 }],
        },
      ],
    },
  };
}

async function configured(
  templates: TemplatePlan[],
  networkPolicies: NetworkPolicyPlan[] = [],
): Promise<{ facts: Evidence[]; state: string }> {
  const client = KubeClient.connect({ kubeconfig: c.info.kubeconfig });
  const cluster = new ApiCluster(client);
  const base = plan(c, templates, { networkPolicies });
  const router: RouterPlan = { ...base.router!, namespace: routerNs, podLabels: SHIPPED_LABELS };
  const evidence = await routerProbe({
    cluster,
    plan: { ...base, router },
    facts: releaseFacts('v0.5.6'),
    runtime: new AdapterRuntimeProber({}),
    workload: new Workload(cluster),
  }).run({ signal: new AbortController().signal, deadlineMs: 15_000, evidence: [], note: () => undefined });
  return { facts: evidence.filter((e) => e.step === 'configured'), state: settle(evidence).state };
}

const tp = (name: string, management: 'Managed' | 'Unmanaged'): TemplatePlan => ({
  namespace: ns,
  name,
  runtime: 'sandboxd',
  ports: { rest: 8080, grpc: 9090 },
  networkPolicyManagement: management,
});

beforeAll(async () => {
  c = connect();
  net = c.kc.makeApiClient(k8s.NetworkingV1Api);
  ns = await freshNamespace(c, 'np11');
  routerNs = await freshNamespace(c, 'np11-router');
  await c.core.createNamespacedPod({
    namespace: routerNs,
    body: {
      metadata: { name: 'sandbox-router-0', labels: SHIPPED_LABELS },
      spec: {
        nodeSelector: { 'agentplane.io/runtime': 'standin' },
        tolerations: [{ operator: 'Exists' }],
        containers: [{ name: 'router', image: 'registry.local/agentplane-test/sandbox-router:v0.5.6' }],
      },
    },
  });
  // `py`: Managed, no network settings — the controller writes py-network-policy with its fixed peer.
  await c.custom.createNamespacedCustomObject({
    ...EXT,
    namespace: ns,
    plural: 'sandboxtemplates',
    body: sandboxdTemplate(ns, 'py', 'sandboxd'),
  });
  // `own`: Unmanaged; the environment applies its own policy for it.
  const own = sandboxdTemplate(ns, 'own', 'sandboxd') as {
    spec: { networkPolicyManagement?: string; podTemplate: { metadata: { labels: Record<string, string> } } };
  };
  own.spec.networkPolicyManagement = 'Unmanaged';
  own.spec.podTemplate.metadata.labels = { app: 'own-sandbox' };
  await c.custom.createNamespacedCustomObject({ ...EXT, namespace: ns, plural: 'sandboxtemplates', body: own });
  await waitFor('controller-made py-network-policy', 30_000, async () => {
    const list = await net.listNamespacedNetworkPolicy({ namespace: ns });
    return list.items.some((p) => p.metadata?.name === 'py-network-policy') ? true : undefined;
  });
}, 60_000);

test("case netpol-router-peer-mismatch: the controller's default policy names another namespace and label than the live router pod: not admitted", async () => {
  const { facts, state } = await configured([tp('py', 'Managed')]);
  expect(facts.map((e) => [e.verdict, e.reason, e.subject, e.value])).toEqual([
    ['missing', 'RouterNotAdmitted', `template ${ns}/py`, `${ns}/py-network-policy`],
  ]);
  expect(facts[0]!.objects).toEqual([`${routerNs}/sandbox-router-0`]);
  // discovered and compatible from the cluster's router URL; never configured, so never verified.
  expect(state).toBe('compatible');
});

test('the descriptor declaring the router as peer does not matter: the live policy naming another peer decides', async () => {
  await net.createNamespacedNetworkPolicy({
    namespace: ns,
    body: policy('own-ingress', 'agent-sandbox-system', { app: 'sandbox-router' }, { app: 'own-sandbox' }),
  });
  const declared: NetworkPolicyPlan = {
    namespace: ns,
    name: 'own-ingress',
    template: 'own',
    allowedEgress: [],
    ingressFrom: [{ namespace: routerNs, podLabels: SHIPPED_LABELS }],
  };
  const { facts } = await configured([tp('own', 'Unmanaged')], [declared]);
  expect(facts.map((e) => [e.reason, e.value])).toEqual([['RouterNotAdmitted', `${ns}/own-ingress`]]);
  // Fix the live policy's peer to the live router: admitted.
  await net.replaceNamespacedNetworkPolicy({
    namespace: ns,
    name: 'own-ingress',
    body: policy('own-ingress', routerNs, SHIPPED_LABELS, { app: 'own-sandbox' }),
  });
  const fixed = await configured([tp('own', 'Unmanaged')], [declared]);
  expect(fixed.facts.map((e) => [e.verdict, e.reason, e.value])).toEqual([
    ['proven', 'RouterAdmittedByPolicies', `${ns}/own-ingress`],
  ]);
  expect(fixed.state).toBe('configured');
});

test('policies add up: a second live policy admitting the live router pod makes the Managed template admit it', async () => {
  await net.createNamespacedNetworkPolicy({
    namespace: ns,
    body: policy('py-admit-router', routerNs, SHIPPED_LABELS, { app: 'sandbox' }),
  });
  const { facts } = await configured([tp('py', 'Managed')]);
  expect(facts.map((e) => [e.verdict, e.reason, e.value])).toEqual([
    ['proven', 'RouterAdmittedByPolicies', `${ns}/py-admit-router, ${ns}/py-network-policy`],
  ]);
  await net.deleteNamespacedNetworkPolicy({ namespace: ns, name: 'py-admit-router' });
});

test("the router pods are the ones behind the live Service's selector; with none live, admission is unknown", async () => {
  await c.core.createNamespacedService({
    namespace: routerNs,
    body: {
      metadata: { name: 'sandbox-router-svc' },
      spec: { clusterIP: 'None', selector: { app: 'nothing-runs-this' }, ports: [{ port: 8080 }] },
    },
  });
  const { facts } = await configured([tp('py', 'Managed')]);
  expect(facts.map((e) => [e.verdict, e.reason])).toEqual([['unknown', 'RouterPodsNotFound']]);
  expect(facts[0]!.value).toMatch(/pods behind Service .*\/sandbox-router-svc \(selector app=nothing-runs-this\)/);
  await c.core.deleteNamespacedService({ namespace: routerNs, name: 'sandbox-router-svc' });
});
