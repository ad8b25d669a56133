/**
 * RuntimeClass scheduling on the real scheduler + kwok nodes: a RuntimeClass whose `scheduling.nodeSelector` matches a
 * labelled (and tainted) node gets its pod Running there; one whose selector no node carries leaves the pod Pending with
 * PodScheduled=False/Unschedulable (RuntimeClass admission merges scheduling into the pod, kube-apiserver v1.36.3
 * `plugin/pkg/admission/runtimeclass/admission.go`).
 */
import * as k8s from '@kubernetes/client-node';
import { kwokNode } from '../../test-cluster/nodes.js';
import { serverSideApply } from '../../test-cluster/kube.js';
import { connect, freshNamespace, waitFor, type Cluster } from './helpers.js';

let c: Cluster;
let ns: string;
const suffix = Math.random().toString(36).slice(2, 7);
const nodeName = `kwok-gvisor-${suffix}`;
const matching = `gvisor-${suffix}`;
const nowhere = `kata-${suffix}`;
const node = (c0: Cluster) => c0.kc.makeApiClient(k8s.NodeV1Api);

beforeAll(async () => {
  c = connect();
  ns = await freshNamespace(c, 'rtc');
  await serverSideApply(c.info.kubeconfig, [
    kwokNode(
      nodeName,
      100 + Math.floor(Math.random() * 150),
      { 'sandbox.gke.io/runtime': 'gvisor' },
      [{ key: 'sandbox.gke.io/runtime', value: 'gvisor', effect: 'NoSchedule' }],
      c.info.podNet,
    ),
  ]);
  await node(c).createRuntimeClass({
    body: {
      metadata: { name: matching },
      handler: 'runsc',
      scheduling: {
        nodeSelector: { 'sandbox.gke.io/runtime': 'gvisor' },
        tolerations: [{ key: 'sandbox.gke.io/runtime', operator: 'Equal', value: 'gvisor', effect: 'NoSchedule' }],
      },
    },
  });
  await node(c).createRuntimeClass({
    body: {
      metadata: { name: nowhere },
      handler: 'kata',
      scheduling: { nodeSelector: { 'katacontainers.io/kata-runtime': 'true' } },
    },
  });
}, 30_000);

afterAll(async () => {
  if (!c) return;
  await c.core.deleteNamespace({ name: ns }).catch(() => undefined);
  await node(c)
    .deleteRuntimeClass({ name: matching })
    .catch(() => undefined);
  await node(c)
    .deleteRuntimeClass({ name: nowhere })
    .catch(() => undefined);
  await c.core.deleteNode({ name: nodeName }).catch(() => undefined);
});

const pod = (name: string, runtimeClassName: string): k8s.V1Pod => ({
  metadata: { name },
  spec: { runtimeClassName, containers: [{ name: 'main', image: 'registry.k8s.io/pause:3.10' }] },
});

test('a pod whose RuntimeClass matches a labelled, tainted node runs on that node with a loopback pod IP', async () => {
  await c.core.createNamespacedPod({ namespace: ns, body: pod('on-gvisor', matching) });
  const running = await waitFor('pod on-gvisor Running', 30_000, async () => {
    const p = await c.core.readNamespacedPod({ namespace: ns, name: 'on-gvisor' });
    return p.status?.phase === 'Running' ? p : undefined;
  });
  expect(running.spec?.nodeName).toBe(nodeName);
  expect(running.spec?.nodeSelector).toEqual({ 'sandbox.gke.io/runtime': 'gvisor' });
  expect(running.status?.podIP).toMatch(new RegExp(`^127\\.${c.info.podNet}\\.`));
}, 60_000);

test('a pod whose RuntimeClass selects labels no node carries stays Pending, Unschedulable', async () => {
  await c.core.createNamespacedPod({ namespace: ns, body: pod('nowhere', nowhere) });
  const cond = await waitFor('PodScheduled=False on pod nowhere', 30_000, async () => {
    const p = await c.core.readNamespacedPod({ namespace: ns, name: 'nowhere' });
    return p.status?.conditions?.find((x) => x.type === 'PodScheduled' && x.status === 'False');
  });
  expect(cond.reason).toBe('Unschedulable');
  await new Promise((r) => setTimeout(r, 2000));
  const later = await c.core.readNamespacedPod({ namespace: ns, name: 'nowhere' });
  expect(later.status?.phase).toBe('Pending');
  expect(later.spec?.nodeName).toBeUndefined();
}, 60_000);
