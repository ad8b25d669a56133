/**
 * Case gvisor-evidence-markers, live: the verifier's isolation evidence (src/verify/probes/isolation.ts) for real pods on
 * the real node (runsc, systrap), read over port-forward from sandboxd inside each pod — the path the verifier takes.
 * A pod under handler runsc shows a kernel unlike the node's and a gVisor marker, each recorded verbatim; a pod under
 * a class named like gVisor whose handler is runc (fixture p3) reads the node's own kernel: `HostKernel`.
 */
import * as k8s from '@kubernetes/client-node';
import { Cluster as KubeCluster } from '../../../src/adapter/kubernetes/cluster.js';
import { KubeClient } from '../../../src/adapter/kubernetes/client.js';
import { podView } from '../../../src/adapter/kubernetes/views.js';
import { releaseFacts } from '../../../src/releases/supported.js';
import { Facts, type ProbeDeps } from '../../../src/verify/probes/common.js';
import { isolationEvidence } from '../../../src/verify/probes/isolation.js';
import { AdapterRuntimeProber, type RuntimeTarget } from '../../../src/verify/runtime-prober.js';
import { connect, freshNamespace, type Cluster } from '../helpers.js';
import {
  describeRealNode,
  NODE_TOOLS_IMAGE,
  onRealNode,
  realNode,
  SANDBOXD_ARGS,
  waitRunning,
} from '../real-node-helpers.js';

describeRealNode('case gvisor-evidence-markers on the real node', () => {
  let c: Cluster;
  let ns: string;
  const suffix = Math.random().toString(36).slice(2, 7);
  const runsc = `gvisor-${suffix}`;
  const hostKernel = `gvisor-runc-${suffix}`;
  const nodeApi = () => c.kc.makeApiClient(k8s.NodeV1Api);

  beforeAll(async () => {
    c = connect();
    ns = await freshNamespace(c, 'gvmarkers');
    await nodeApi().createRuntimeClass({ body: { metadata: { name: runsc }, handler: 'runsc' } });
    await nodeApi().createRuntimeClass({ body: { metadata: { name: hostKernel }, handler: 'runc' } });
  });

  afterAll(async () => {
    await c.core.deleteNamespace({ name: ns }).catch(() => undefined);
    for (const name of [runsc, hostKernel])
      await nodeApi()
        .deleteRuntimeClass({ name })
        .catch(() => undefined);
  });

  async function evidenceFor(pod: string, runtimeClassName: string) {
    await c.core.createNamespacedPod({
      namespace: ns,
      body: {
        metadata: { name: pod },
        spec: {
          ...onRealNode(realNode(c)),
          runtimeClassName,
          terminationGracePeriodSeconds: 1,
          containers: [
            {
              name: 'sandboxd',
              image: NODE_TOOLS_IMAGE,
              imagePullPolicy: 'Never',
              args: SANDBOXD_ARGS,
              volumeMounts: [{ name: 'workspace', mountPath: '/workspace' }],
            },
          ],
          volumes: [{ name: 'workspace', emptyDir: {} }],
        },
      },
    });
    const live = await waitRunning(c, ns, pod);
    const client = KubeClient.connect({ kubeconfig: c.info.kubeconfig });
    const runtime = new AdapterRuntimeProber({ client });
    const deps = {
      cluster: new KubeCluster(client),
      runtime,
      facts: releaseFacts('v0.5.6'),
      plan: { probeTimeoutMs: 10_000, templates: [] },
    } as unknown as ProbeDeps;
    const target: RuntimeTarget = {
      kind: 'sandboxd',
      transport: 'port-forward',
      namespace: ns,
      sandbox: pod,
      pod,
      ...(live.status?.podIP ? { podIP: live.status.podIP } : {}),
      restPort: 8080,
      grpcPort: 9090,
    };
    const rc = new Facts(`runtime-class/${runtimeClassName}`);
    try {
      await isolationEvidence(deps, rc, runtimeClassName, podView(live as never), target, true);
    } finally {
      await runtime.close();
    }
    return rc.list;
  }

  test('runsc: the kernel differs from the node kernelVersion and /proc/version carries the gVisor build line', async () => {
    const node = (await c.core.readNode({ name: realNode(c).name })).status?.nodeInfo?.kernelVersion;
    const facts = await evidenceFor('p1', runsc);
    expect(facts.map((e) => [e.reason, e.verdict])).toEqual([
      ['RanUnderRuntimeClass', 'proven'],
      ['KernelDiffersFromNode', 'proven'],
      ['GvisorKernel', 'proven'],
    ]);
    const kernel = facts[1]!;
    expect(kernel.value).toMatch(/gvisor/);
    expect(kernel.value).not.toBe(node);
    expect([facts[2]!.field, facts[2]!.value]).toEqual([
      '/proc/version',
      `Linux version ${kernel.value} #1 SMP Sun Jan 10 15:06:54 PST 2016`,
    ]);
  }, 180_000);

  test('p3 live: a gVisor-named class whose handler is runc runs on the host kernel (HostKernel), no marker', async () => {
    const node = (await c.core.readNode({ name: realNode(c).name })).status?.nodeInfo?.kernelVersion;
    const facts = await evidenceFor('p3', hostKernel);
    expect(facts.map((e) => [e.reason, e.verdict])).toEqual([
      ['RanUnderRuntimeClass', 'proven'],
      ['HostKernel', 'missing'],
      ['NotGvisorKernel', 'missing'],
    ]);
    expect(facts[1]!.value).toBe(node);
    expect(facts[2]!.value).toMatch(/^Linux version /);
  }, 180_000);
});
