/**
 * Case gvisor-runtimeclass-unschedulable on the cluster: pods under a RuntimeClass land on nodes whose runtime lacks
 * the handler and never start; the verifier reports their FailedCreatePodSandBox events, one line per node (the probe
 * pod and its warm-pool siblings, one per node by pod anti-affinity), and the probe pod's own events in the template's
 * evidence.
 *
 * How the pods are kept from starting: the test adds three Nodes that kwok does NOT manage (no `kwok.x-k8s.io/node=fake`
 * annotation, test-cluster/README.md), marks it Ready through the status subresource, and labels and taints it so that
 * only the test's RuntimeClass (whose `scheduling` admission merges into the pod) lands pods there. The real scheduler
 * binds the probe pod to it; with no kubelet and no kwok stage for that node, the pod stays Pending — what a node
 * without the runsc handler looks like from the API.
 *
 * FAULT WRITTEN BY THE TEST: the FailedCreatePodSandBox Warning event. The test cluster has no kubelet and no container
 * runtime, so nothing there can produce it; the test writes it itself through the real API server (core/v1 Events,
 * involvedObject = the pod, `source.host` / `reportingInstance` = the node, as the kubelet's recorder fills them),
 * with a message in the shape containerd gives when the handler's binary is missing.
 */
import * as k8s from '@kubernetes/client-node';
import { runVerify } from '../../../src/verify/index.js';
import { requirementsFor } from '../../../src/verify/requirements.js';
import type { VerifyReport } from '../../../src/verify/report.js';
import { KubeClient } from '../../../src/adapter/kubernetes/client.js';
import { connect, freshNamespace, type Cluster } from '../helpers.js';
import { EXT, plan, sandboxdTemplate, templatePlan } from './verifier-env.js';

const MESSAGE =
  'Failed to create pod sandbox: rpc error: code = Unknown desc = failed to create containerd task: failed to create shim task: OCI runtime create failed: exec: "runsc": executable file not found in $PATH: unknown';

let c: Cluster;
let ns: string;
const suffix = Math.random().toString(36).slice(2, 7);
const rcName = `vfy-fcps-${suffix}`;
const label = `agentplane.dev/fcps-${suffix}`;
const nodeNames = [`vfy-nokubelet-${suffix}-a`, `vfy-nokubelet-${suffix}-b`, `vfy-nokubelet-${suffix}-c`];
const nodeApi = () => c.kc.makeApiClient(k8s.NodeV1Api);

/** A Node kwok leaves alone, reported Ready with room for pods: the scheduler binds to it, nothing ever starts there. */
async function unmanagedReadyNode(name: string): Promise<void> {
  await c.core.createNode({
    body: {
      apiVersion: 'v1',
      kind: 'Node',
      metadata: { name, labels: { 'kubernetes.io/hostname': name, [label]: 'true' } },
      spec: { taints: [{ key: label, value: 'true', effect: 'NoSchedule' }] },
    },
  });
  const node = await c.core.readNode({ name });
  const now = new Date();
  node.status = {
    capacity: { cpu: '4', memory: '8Gi', pods: '110' },
    allocatable: { cpu: '4', memory: '8Gi', pods: '110' },
    conditions: [
      {
        type: 'Ready',
        status: 'True',
        reason: 'KubeletReady',
        message: 'set by the test: no kubelet runs for this node',
        lastHeartbeatTime: now,
        lastTransitionTime: now,
      },
    ],
  };
  await c.core.replaceNodeStatus({ name, body: node });
}

/** The Warning event the kubelet would record on `pod` for node `node` (see the file comment: written by the test). */
async function failedCreatePodSandBox(pod: k8s.V1Pod, node: string): Promise<void> {
  const now = new Date();
  await c.core.createNamespacedEvent({
    namespace: ns,
    body: {
      metadata: { name: `${pod.metadata!.name}.${Date.now().toString(16)}`, namespace: ns },
      involvedObject: {
        apiVersion: 'v1',
        kind: 'Pod',
        name: pod.metadata!.name!,
        namespace: ns,
        uid: pod.metadata!.uid!,
      },
      type: 'Warning',
      reason: 'FailedCreatePodSandBox',
      message: MESSAGE,
      source: { component: 'kubelet', host: node },
      reportingComponent: 'kubelet',
      reportingInstance: node,
      count: 3,
      firstTimestamp: now,
      lastTimestamp: now,
    },
  });
}

beforeAll(async () => {
  c = connect();
  ns = await freshNamespace(c, 'vfyev');
  for (const n of nodeNames) await unmanagedReadyNode(n);
  await nodeApi().createRuntimeClass({
    body: {
      apiVersion: 'node.k8s.io/v1',
      kind: 'RuntimeClass',
      metadata: { name: rcName },
      handler: 'runsc',
      scheduling: {
        nodeSelector: { [label]: 'true' },
        tolerations: [{ key: label, operator: 'Equal', value: 'true', effect: 'NoSchedule' }],
      },
    },
  });
  // At most one of these pods per node. Pods: the pool's two members plus either the probe claim's cold-start Sandbox
  // or the member that replaces the one it adopted (agent-sandbox picks either, sandboxclaim_controller.go@v0.5.6) —
  // three pods, one on each node, all made within the first seconds of the 10 s wait.
  const template = sandboxdTemplate(ns, 'gv', 'sandboxd', rcName) as {
    spec: { podTemplate: { metadata: { labels: Record<string, string> }; spec: Record<string, unknown> } };
  };
  template.spec.podTemplate.metadata.labels[label] = 'spread';
  template.spec.podTemplate.spec.affinity = {
    podAntiAffinity: {
      requiredDuringSchedulingIgnoredDuringExecution: [
        { topologyKey: 'kubernetes.io/hostname', labelSelector: { matchLabels: { [label]: 'spread' } } },
      ],
    },
  };
  await c.custom.createNamespacedCustomObject({ ...EXT, namespace: ns, plural: 'sandboxtemplates', body: template });
  await c.custom.createNamespacedCustomObject({
    ...EXT,
    namespace: ns,
    plural: 'sandboxwarmpools',
    body: {
      apiVersion: 'extensions.agents.x-k8s.io/v1beta1',
      kind: 'SandboxWarmPool',
      metadata: { name: 'gv-pool', namespace: ns },
      spec: { replicas: 2, sandboxTemplateRef: { name: 'gv' } },
    },
  });
}, 60_000);

afterAll(async () => {
  // Pods bound to the kubelet-less node never finish terminating by themselves: delete them at once.
  const pods = await c.core.listNamespacedPod({ namespace: ns }).catch(() => ({ items: [] as k8s.V1Pod[] }));
  for (const p of pods.items)
    await c.core
      .deleteNamespacedPod({ namespace: ns, name: p.metadata!.name!, gracePeriodSeconds: 0 })
      .catch(() => undefined);
  await nodeApi()
    .deleteRuntimeClass({ name: rcName })
    .catch(() => undefined);
  for (const n of nodeNames) await c.core.deleteNode({ name: n }).catch(() => undefined);
  await c.core.deleteNamespace({ name: ns }).catch(() => undefined);
}, 60_000);

test("pods stuck on three nodes without the handler: one FailedCreatePodSandBox line per node, the probe pod's own in the template evidence", async () => {
  // While the verifier waits for its probe sandbox, write the kubelet's event for every pod bound to a node.
  const written = new Map<string, string>();
  let running = true;
  const writer = (async () => {
    while (running) {
      const pods = await c.core.listNamespacedPod({ namespace: ns });
      for (const p of pods.items) {
        const node = p.spec?.nodeName;
        if (node && !written.has(p.metadata!.name!)) {
          await failedCreatePodSandBox(p, node);
          written.set(p.metadata!.name!, node);
        }
      }
      await new Promise((r) => setTimeout(r, 200));
    }
  })();
  let report: VerifyReport;
  try {
    const p = plan(c, [templatePlan(ns, 'gv', rcName)], {
      runtimeClasses: [rcName],
      warmPools: [{ namespace: ns, name: 'gv-pool', template: 'gv', replicas: 2 }],
      readyTimeoutMs: 10_000,
      requirements: requirementsFor([`runtime-class/${rcName}`, `template/${ns}/gv`]),
    });
    ({ report } = await runVerify({
      plan: p,
      client: KubeClient.connect({ kubeconfig: c.info.kubeconfig }),
      controllerMode: 'external',
      progress: () => undefined,
      cleanupWaitMs: 2_000,
    }));
  } finally {
    running = false;
    await writer;
  }

  // One pod on each kubelet-less node (RuntimeClass scheduling merged in by admission).
  expect([...written.values()].sort()).toEqual(nodeNames);
  const podOn = new Map([...written].map(([pod, node]) => [node, pod]));

  const rc = report.capabilities.find((r) => r.name === `runtime-class/${rcName}`)!;
  expect(rc.evidence.find((e) => e.step === 'compatible')).toMatchObject({
    verdict: 'proven',
    reason: 'NodesMatchRuntimeClass',
    value: nodeNames.join(','),
  });
  const perNode = rc.evidence
    .filter((e) => e.field === 'events[reason=FailedCreatePodSandBox]')
    .map((e) => ({ step: e.step, verdict: e.verdict, reason: e.reason, subject: e.subject, value: e.value }));
  expect(perNode.sort((a, b) => a.subject.localeCompare(b.subject))).toEqual(
    nodeNames.map((n) => ({
      step: 'verified',
      verdict: 'missing',
      reason: 'FailedCreatePodSandBox',
      subject: `Node ${n}`,
      value: MESSAGE,
    })),
  );
  expect(podOn.size).toBe(nodeNames.length);
  expect(rc.state).toBe('configured');
  expect(rc.nextReason).toBe('FailedCreatePodSandBox');

  // The template's own evidence says why it is not verified and carries the probe pod's event, node included.
  const t = report.capabilities.find((r) => r.name === `template/${ns}/gv`)!;
  const waited = t.evidence.find((e) => e.step === 'verified' && e.verdict === 'unknown')!;
  expect(waited.reason).toBe('ProbeNotReadyInTime');
  const probe = waited.field?.slice('events[pod='.length, -1);
  expect(waited.field).toBe(`events[pod=${probe}]`);
  expect(written.has(probe!)).toBe(true);
  expect(waited.value).toBe(`FailedCreatePodSandBox@${written.get(probe!)}×3`);
}, 120_000);
