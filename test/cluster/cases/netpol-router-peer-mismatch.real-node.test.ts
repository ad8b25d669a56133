/**
 * Case netpol-router-peer-mismatch on the REAL node, where kube-router enforces NetworkPolicy: the verifier's verdict
 * from the live policy and router pods (router.ts, `RouterNotAdmitted` / `RouterAdmittedByPolicies`) agrees with what
 * real traffic does. A Managed template's sandbox pod (a warm pool member; policy `<template>-network-policy` made by the real controller:
 * ingress only from `app: sandbox-router` in `agent-sandbox-system`) runs a listener on 8080; a router pod with the
 * shipped labels in another namespace is refused — the case's timeout — and one matching the policy's peer connects.
 * On kwok nodes (the sibling file netpol-router-peer-mismatch.verify.test.ts) policies are stored, never enforced.
 */
import * as k8s from '@kubernetes/client-node';
import { Cluster as ApiCluster } from '../../../src/adapter/kubernetes/cluster.js';
import { KubeClient } from '../../../src/adapter/kubernetes/client.js';
import { releaseFacts } from '../../../src/releases/index.js';
import type { RouterPlan, TemplatePlan } from '../../../src/verify/plan.js';
import { routerProbe } from '../../../src/verify/probes/router.js';
import { AdapterRuntimeProber } from '../../../src/verify/runtime-prober.js';
import { Workload } from '../../../src/verify/workload.js';
import { connect, freshNamespace, waitFor, type Cluster } from '../helpers.js';
import {
  describeRealNode,
  kubeExec,
  NODE_TOOLS_IMAGE,
  onRealNode,
  realNode,
  realNodeSandboxdTemplate,
  waitRunning,
} from '../real-node-helpers.js';
import { EXT, plan } from '../verify/verifier-env.js';

const SHIPPED_LABELS = { 'app.kubernetes.io/name': 'sandbox-router' };
const POLICY_PEER = { namespace: 'agent-sandbox-system', labels: { app: 'sandbox-router' } };

describeRealNode('case netpol-router-peer-mismatch on the real node (kube-router enforcing)', () => {
  let c: Cluster;
  let ns: string;
  let routerNs: string;
  const okRouter = `router-ok-${Math.random().toString(36).slice(2, 7)}`;

  /** A sleeping tools pod on the real node (a router's network identity: namespace + labels). */
  function routerPod(name: string, labels: Record<string, string>): k8s.V1Pod {
    return {
      metadata: { name, labels },
      spec: {
        ...onRealNode(realNode(c)),
        terminationGracePeriodSeconds: 1,
        containers: [
          { name: 'main', image: NODE_TOOLS_IMAGE, imagePullPolicy: 'Never', command: ['/bin/sleep', '3600'] },
        ],
      },
    };
  }

  /** The router probe's `configured` facts for router pods in `namespace` with `podLabels`. */
  async function admission(namespace: string, podLabels: Record<string, string>): Promise<string[][]> {
    const cluster = new ApiCluster(KubeClient.connect({ kubeconfig: c.info.kubeconfig }));
    const tp: TemplatePlan = {
      namespace: ns,
      name: 'py',
      runtime: 'sandboxd',
      ports: { rest: 8080, grpc: 9090 },
      networkPolicyManagement: 'Managed',
    };
    const base = plan(c, [tp]);
    const router: RouterPlan = { ...base.router!, namespace, podLabels };
    const evidence = await routerProbe({
      cluster,
      plan: { ...base, router },
      facts: releaseFacts('v0.5.6'),
      runtime: new AdapterRuntimeProber({}),
      workload: new Workload(cluster),
    }).run({ signal: new AbortController().signal, deadlineMs: 15_000, evidence: [], note: () => undefined });
    return evidence.filter((e) => e.step === 'configured').map((e) => [e.verdict, e.reason]);
  }

  /** Dials `ip:8080` from pod `namespace/pod` (busybox nc, 3 s connect timeout); true when `reached` came back. */
  async function reaches(namespace: string, pod: string, ip: string): Promise<boolean> {
    const r = await kubeExec(c, namespace, pod, 'main', ['/bin/sh', '-c', `/bin/nc -w 3 ${ip} 8080 </dev/null`]);
    return r.exitCode === 0 && r.stdout.trim() === 'reached';
  }

  beforeAll(async () => {
    c = connect();
    ns = await freshNamespace(c, 'np11real');
    routerNs = await freshNamespace(c, 'np11real-router');
    // `py`: Managed, no network settings: the controller writes py-network-policy with its fixed peer.
    await c.custom.createNamespacedCustomObject({
      ...EXT,
      namespace: ns,
      plural: 'sandboxtemplates',
      body: realNodeSandboxdTemplate(c, ns, 'py', {
        name: 'main',
        args: [],
        command: ['/bin/nc', '-ll', '-p', '8080', '-e', '/bin/echo', 'reached'],
        ports: [{ containerPort: 8080 }],
        volumeMounts: [],
      }),
    });
    await c.custom.createNamespacedCustomObject({
      ...EXT,
      namespace: ns,
      plural: 'sandboxwarmpools',
      body: {
        apiVersion: 'extensions.agents.x-k8s.io/v1beta1',
        kind: 'SandboxWarmPool',
        metadata: { name: 'py-pool' },
        spec: { replicas: 1, sandboxTemplateRef: { name: 'py' } },
      },
    });
    await c.core.createNamespacedPod({ namespace: routerNs, body: routerPod('router-shipped', SHIPPED_LABELS) });
    await c.core.createNamespacedPod({
      namespace: POLICY_PEER.namespace,
      body: routerPod(okRouter, POLICY_PEER.labels),
    });
  }, 60_000);

  afterAll(async () => {
    await c.core.deleteNamespacedPod({ namespace: POLICY_PEER.namespace, name: okRouter }).catch(() => undefined);
    await c.core.deleteNamespace({ name: ns }).catch(() => undefined);
    await c.core.deleteNamespace({ name: routerNs }).catch(() => undefined);
  });

  test('the shipped router labels are not admitted, by the verifier and by kube-router alike; the policy peer is admitted by both', async () => {
    const sandboxPod = await waitFor("the pool's sandbox pod Running on the real node", 120_000, async () => {
      const pods = await c.core.listNamespacedPod({
        namespace: ns,
        labelSelector: 'agents.x-k8s.io/sandbox-name-hash',
      });
      const p = pods.items.find((x) => x.status?.phase === 'Running' && x.status.podIP);
      return p;
    });
    expect(sandboxPod.spec?.nodeName).toBe(realNode(c).name);
    const ip = sandboxPod.status!.podIP!;
    await waitRunning(c, routerNs, 'router-shipped');
    await waitRunning(c, POLICY_PEER.namespace, okRouter);
    const policy = await c.kc
      .makeApiClient(k8s.NetworkingV1Api)
      .readNamespacedNetworkPolicy({ namespace: ns, name: 'py-network-policy' });
    expect(policy.spec?.ingress?.[0]?._from?.[0]?.podSelector?.matchLabels).toEqual(POLICY_PEER.labels);

    // Live traffic: once kube-router has synced the policy, the peer connects and the shipped-label router does not.
    await waitFor('kube-router enforcing py-network-policy', 60_000, async () =>
      (await reaches(POLICY_PEER.namespace, okRouter, ip)) && !(await reaches(routerNs, 'router-shipped', ip))
        ? true
        : undefined,
    );
    // The verifier, from the live objects: the same two answers.
    expect(await admission(routerNs, SHIPPED_LABELS)).toEqual([['missing', 'RouterNotAdmitted']]);
    expect(await admission(POLICY_PEER.namespace, POLICY_PEER.labels)).toEqual([
      ['proven', 'RouterAdmittedByPolicies'],
    ]);
    // Repeated: the refusal holds (not a sync race).
    expect(await reaches(routerNs, 'router-shipped', ip)).toBe(false);
  }, 240_000);
});
