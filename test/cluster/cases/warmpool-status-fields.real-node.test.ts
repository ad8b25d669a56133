/**
 * Case warmpool-status-fields, live (node kind: the REAL node; the controller v0.5.6 as the cluster's local process):
 * the pool probe reads the status the real controller writes and compares it with the members it counts. A pool of 1
 * on the node: `status.observedGeneration` is present and current, the counters agree (no `PoolStatusStale`),
 * `PoolRolledOut`. Scaled to 0: v0.5.6 clears the counters (merge patch, kubernetes-sigs/agent-sandbox#807), so the
 * absent counters agree with 0 members. The stale shapes (v0.4.6 counters after scale-to-zero, a missing
 * observedGeneration) are not producible by this controller; test/cases/warmpool-status-fields.test.ts judges them.
 */
import { Cluster as KubeCluster } from '../../../src/adapter/kubernetes/cluster.js';
import { KubeClient } from '../../../src/adapter/kubernetes/client.js';
import { releaseFacts } from '../../../src/releases/supported.js';
import type { Evidence } from '../../../src/verify/evidence.js';
import type { ProbeDeps } from '../../../src/verify/probes/common.js';
import { warmPoolProbe } from '../../../src/verify/probes/warm-pool.js';
import { connect, freshNamespace, waitFor, type Cluster } from '../helpers.js';
import { describeRealNode, NODE_TOOLS_IMAGE, onRealNode, realNode } from '../real-node-helpers.js';

const EXT = { group: 'extensions.agents.x-k8s.io', version: 'v1beta1' };

describeRealNode('case warmpool-status-fields (live, v0.5.6 controller)', () => {
  let c: Cluster;
  let ns: string;
  let deps: ProbeDeps;

  beforeAll(async () => {
    c = connect();
    ns = await freshNamespace(c, 'wpstatus');
    const client = KubeClient.connect({ kubeconfig: c.info.kubeconfig });
    deps = {
      cluster: new KubeCluster(client),
      facts: releaseFacts(c.info.release),
      plan: { readyTimeoutMs: 60_000 },
    } as unknown as ProbeDeps;
    await c.custom.createNamespacedCustomObject({
      ...EXT,
      namespace: ns,
      plural: 'sandboxtemplates',
      body: {
        apiVersion: 'extensions.agents.x-k8s.io/v1beta1',
        kind: 'SandboxTemplate',
        metadata: { name: 'sd' },
        spec: {
          podTemplate: {
            spec: {
              ...onRealNode(realNode(c)),
              terminationGracePeriodSeconds: 1,
              containers: [
                {
                  name: 'sandboxd',
                  image: NODE_TOOLS_IMAGE,
                  imagePullPolicy: 'Never',
                  args: ['--grpc-port=9090', '--rest-port=8080', '--root-dir=/workspace'],
                  volumeMounts: [{ name: 'workspace', mountPath: '/workspace' }],
                },
              ],
              volumes: [{ name: 'workspace', emptyDir: {} }],
            },
          },
        },
      },
    });
    await c.custom.createNamespacedCustomObject({
      ...EXT,
      namespace: ns,
      plural: 'sandboxwarmpools',
      body: {
        apiVersion: 'extensions.agents.x-k8s.io/v1beta1',
        kind: 'SandboxWarmPool',
        metadata: { name: 'pool' },
        spec: { replicas: 1, sandboxTemplateRef: { name: 'sd' } },
      },
    });
  }, 60_000);

  afterAll(async () => {
    if (ns) await c.core.deleteNamespace({ name: ns }).catch(() => undefined);
  });

  const probe = (replicas: number): Promise<readonly Evidence[]> =>
    warmPoolProbe(deps, { namespace: ns, name: 'pool', template: 'sd', replicas }).run({
      signal: new AbortController().signal,
      deadlineMs: 120_000,
      evidence: [],
      note: () => undefined,
    });
  const configured = (ev: readonly Evidence[]) =>
    ev.filter((e) => e.step === 'configured').map((e) => [e.verdict, e.reason]);
  const pool = async () =>
    (await c.custom.getNamespacedCustomObject({ ...EXT, namespace: ns, plural: 'sandboxwarmpools', name: 'pool' })) as {
      metadata: { generation: number };
      status?: { observedGeneration?: number; replicas?: number; readyReplicas?: number };
    };

  test('a pool of 1 on the node: observedGeneration current, counters agree with the member: PoolRolledOut only', async () => {
    await waitFor('pool status at 1 ready', 120_000, async () => {
      const p = await pool();
      return p.status?.readyReplicas === 1 && p.status.observedGeneration === p.metadata.generation ? true : undefined;
    });
    const ev = await probe(1);
    expect(configured(ev)).toEqual([['proven', 'PoolRolledOut']]);
    expect(ev.find((e) => e.reason === 'PoolRolledOut')!.observed).toMatchObject({ members: 1, ready: 1 });
  }, 180_000);

  test('scaled to 0: v0.5.6 clears the counters, absent = 0 agrees with no members: no PoolStatusStale', async () => {
    await c.custom.patchNamespacedCustomObject({
      ...EXT,
      namespace: ns,
      plural: 'sandboxwarmpools',
      name: 'pool',
      body: [{ op: 'replace', path: '/spec/replicas', value: 0 }],
    });
    await waitFor('pool status for the new generation with no ready member', 120_000, async () => {
      const p = await pool();
      return p.status?.observedGeneration === p.metadata.generation && !p.status.readyReplicas && !p.status.replicas
        ? true
        : undefined;
    });
    const p = await pool();
    expect(p.status?.replicas).toBeUndefined();
    expect(p.status?.readyReplicas).toBeUndefined();
    const ev = await probe(0);
    expect(configured(ev)).toEqual([['proven', 'PoolRolledOut']]);
    expect(ev.find((e) => e.reason === 'PoolRolledOut')!.observed).toMatchObject({ members: 0, ready: 0 });
  }, 180_000);
});
