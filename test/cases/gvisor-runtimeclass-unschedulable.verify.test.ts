/**
 * Case gvisor-runtimeclass-unschedulable (verifier side): gVisor moves to `compatible` only when a Ready node matches
 * the RuntimeClass scheduling; three nodes, only node-b has the handler label; `verified` only once the runtime inside
 * the pod shows the gVisor kernel (case gvisor-evidence-markers has the signals in full). The real scheduler/admission path is in
 * test/cluster/verify/verify-runtime-class.test.ts; FailedCreatePodSandBox events per node on the real API server in
 * test/cluster/verify/verify-pod-events.test.ts.
 */
import { nodeView, runtimeClassView } from '../../src/adapter/kubernetes/views.js';
import type { Cluster } from '../../src/adapter/kubernetes/cluster.js';
import { podView } from '../../src/adapter/kubernetes/views.js';
import { releaseFacts } from '../../src/releases/supported.js';
import type { ProbeDeps } from '../../src/verify/probes/common.js';
import { Facts } from '../../src/verify/probes/common.js';
import { isolationEvidence } from '../../src/verify/probes/isolation.js';
import { nodeFailureEvidence } from '../../src/verify/probes/pod-events.js';
import { nodesFor, runtimeClassProbe } from '../../src/verify/probes/runtime-class.js';
import type { RuntimeProber, RuntimeTarget } from '../../src/verify/runtime-prober.js';
import { settle } from '../../src/verify/states.js';
import { insideRuntime } from '../unit/verify/fake-inside.js';
import { RUNSC_DMESG } from '../unit/verify/fixtures.js';

const NODE_B_KERNEL = '6.8.0-45-generic';
const node = (name: string, labels: Record<string, string> = {}) => ({
  metadata: { name, labels },
  spec: {},
  status: { conditions: [{ type: 'Ready', status: 'True' }], nodeInfo: { kernelVersion: NODE_B_KERNEL } },
});

describe('case gvisor-runtimeclass-unschedulable (verifier)', () => {
  test('a class without scheduling matches every node, including those without the handler (what the construct forbids)', () => {
    const fits = nodesFor(
      runtimeClassView({ metadata: { name: 'gvisor' }, handler: 'runsc' }),
      [node('node-a'), node('node-b', { 'agentplane.dev/runsc': 'true' }), node('node-c')].map(nodeView),
    );
    expect(fits.filter((f) => f.fits).map((f) => f.node)).toEqual(['node-a', 'node-b', 'node-c']);
  });

  test('with scheduling only node-b is compatible, and the others say why', () => {
    const rc = {
      metadata: { name: 'gvisor' },
      handler: 'runsc',
      scheduling: { nodeSelector: { 'agentplane.dev/runsc': 'true' } },
    };
    expect(
      nodesFor(
        runtimeClassView(rc),
        [node('node-a'), node('node-b', { 'agentplane.dev/runsc': 'true' }), node('node-c')].map(nodeView),
      ),
    ).toEqual([
      { node: 'node-a', fits: false, reason: 'lacks label agentplane.dev/runsc=true' },
      { node: 'node-b', fits: true, reason: 'Ready and matches' },
      { node: 'node-c', fits: false, reason: 'lacks label agentplane.dev/runsc=true' },
    ]);
  });
});

/**
 * The whole ladder for the case's RuntimeClass (with scheduling, so only node-b fits) and a pod that ran on node-b.
 * FAKES, and why: no runtime that can run here answers `dmesg` with a gVisor Sentry log (the test cluster runs
 * sandboxd natively, no runsc), so the runtime is a fake (test/unit/verify/fake-inside.ts); and the unit project has no API
 * server, so the cluster answers just the two reads the probes make (the RuntimeClass and the three nodes of the case).
 */
describe('case gvisor-runtimeclass-unschedulable: verified only with the gVisor kernel answering', () => {
  const gvisor = {
    apiVersion: 'node.k8s.io/v1',
    kind: 'RuntimeClass',
    metadata: { name: 'gvisor' },
    handler: 'runsc',
    scheduling: { nodeSelector: { 'agentplane.dev/runsc': 'true' } },
  };
  const nodes = [node('node-a'), node('node-b', { 'agentplane.dev/runsc': 'true' }), node('node-c')];
  const cluster = {
    runtimeClass: async (n: string) => ({ kind: 'ok', value: n === 'gvisor' ? gvisor : undefined }),
    nodes: async () => ({ kind: 'ok', value: nodes }),
  } as unknown as Cluster;
  const target: RuntimeTarget = {
    kind: 'sandboxd',
    transport: 'direct',
    namespace: 'dev-sandboxes',
    sandbox: 'shell-k2x9p',
    pod: 'shell-k2x9p',
    podIP: '127.10.1.4',
    restPort: 8080,
    grpcPort: 9090,
  };
  const pod = {
    metadata: { name: 'shell-k2x9p', namespace: 'dev-sandboxes' },
    spec: { runtimeClassName: 'gvisor', nodeName: 'node-b' },
  };
  /** A runsc sandbox's inside, with `dmesg` answering `stdout`; its files are those of a host kernel when `host`. */
  const runtimeAnswering = (stdout: string, host = false): RuntimeProber =>
    insideRuntime({
      files: host
        ? {
            '/proc/sys/kernel/osrelease': NODE_B_KERNEL,
            '/proc/version': `Linux version ${NODE_B_KERNEL} (gcc 13.2.0) #45-Ubuntu SMP`,
          }
        : { '/proc/version': 'Linux version 4.4.0 #1 SMP Sun Jan 10 15:06:54 PST 2016' },
      tools: ['cat', 'dmesg'],
      dmesg: stdout,
    });
  const deps = (runtime: RuntimeProber) =>
    ({
      cluster,
      runtime,
      facts: releaseFacts('v0.5.6'),
      plan: {
        probeTimeoutMs: 2_000,
        templates: [
          {
            namespace: 'dev-sandboxes',
            name: 'shell',
            runtime: 'sandboxd',
            ports: { rest: 8080, grpc: 9090 },
            networkPolicyManagement: 'Managed',
            runtimeClassName: 'gvisor',
          },
        ],
      },
    }) as unknown as ProbeDeps;

  async function ladder(dmesg: string, host = false) {
    const d = deps(runtimeAnswering(dmesg, host));
    const evidence = [...(await runtimeClassProbe(d, 'gvisor').run(undefined as never))];
    const rc = new Facts('runtime-class/gvisor');
    await isolationEvidence(d, rc, 'gvisor', podView(pod), target, true);
    return { evidence: [...evidence, ...rc.list], settled: settle([...evidence, ...rc.list]) };
  }

  test('runsc answers dmesg with its boot log: discovered → compatible (node-b) → configured → verified', async () => {
    const { evidence, settled } = await ladder(RUNSC_DMESG);
    expect(settled).toEqual({ state: 'verified', next: null, nextReason: null });
    expect(evidence.map((e) => [e.step, e.verdict, e.reason, e.value])).toEqual([
      ['discovered', 'proven', 'RuntimeClassFound', 'runsc'],
      ['compatible', 'proven', 'NodesMatchRuntimeClass', 'node-b'],
      ['configured', 'proven', 'TemplateUsesRuntimeClass', undefined],
      ['verified', 'proven', 'RanUnderRuntimeClass', 'gvisor'],
      ['verified', 'proven', 'KernelDiffersFromNode', '4.4.0'],
      ['verified', 'proven', 'GvisorKernel', 'Linux version 4.4.0 #1 SMP Sun Jan 10 15:06:54 PST 2016'],
    ]);
  });

  test('the probe pod ran on node-b, but pool siblings under the class failed on node-a and node-c: one missing line per node, not verified', async () => {
    // The case's live state: a pool of 3 under a class the kubelets of node-a and node-c cannot run (no runsc); the
    // probe was served by the member on node-b. Fake reads as above, plus the namespace's pods and their events.
    const member = (name: string, nodeName: string) => ({
      metadata: { name, namespace: 'dev-sandboxes' },
      spec: { runtimeClassName: 'gvisor', nodeName },
    });
    const failed = (name: string, host: string, count: number) => ({
      type: 'Warning',
      reason: 'FailedCreatePodSandBox',
      involvedObject: { kind: 'Pod', name },
      source: { component: 'kubelet', host },
      count,
      message:
        'Failed to create pod sandbox: rpc error: code = Unknown desc = failed to get sandbox runtime: no runtime for "runsc" is configured',
      lastTimestamp: '2026-11-29T10:00:00Z',
    });
    const withPods = {
      ...cluster,
      pods: async () => ({
        kind: 'ok',
        value: [
          pod,
          member('shell-pool-a1', 'node-a'),
          member('shell-pool-c1', 'node-c'),
          { metadata: { name: 'other' }, spec: { runtimeClassName: 'runc' } },
        ],
      }),
      events: async () => ({
        kind: 'ok',
        value: [
          failed('shell-pool-a1', 'node-a', 4),
          failed('shell-pool-c1', 'node-c', 2),
          failed('other', 'node-a', 1),
        ],
      }),
    } as unknown as Cluster;
    const d = { ...deps(runtimeAnswering(RUNSC_DMESG)), cluster: withPods } as ProbeDeps;
    const evidence = [...(await runtimeClassProbe(d, 'gvisor').run(undefined as never))];
    const rc = new Facts('runtime-class/gvisor');
    await isolationEvidence(d, rc, 'gvisor', podView(pod), target, true);
    await nodeFailureEvidence(d, rc, { namespace: 'dev-sandboxes', runtimeClassName: 'gvisor' }, 'shell-k2x9p');
    const cause =
      'Failed to create pod sandbox: rpc error: code = Unknown desc = failed to get sandbox runtime: no runtime for "runsc" is configured';
    const missing = rc.list.filter((e) => e.verdict === 'missing');
    expect(missing.map((e) => [e.subject, e.reason])).toEqual([
      ['Node node-a', 'FailedCreatePodSandBox'],
      ['Node node-c', 'FailedCreatePodSandBox'],
    ]);
    // The kubelet's own message and the event counts (upstream values) are carried into the evidence.
    expect(missing.map((e) => [e.value, e.observed])).toEqual([
      [cause, { events: 4 }],
      [cause, { events: 2 }],
    ]);
    expect(settle([...evidence, ...rc.list]).state).toBe('configured');
  });

  test('a host kernel whose log only mentions gvisor leaves it configured, naming the acceptance test', async () => {
    const host =
      '[    0.000000] Linux version 6.8.0-45-generic (gcc 13.2.0) #45-Ubuntu SMP\n[ 8123.558102] overlayfs: upper fs does not support tmpfile (path /var/lib/gvisor/overlay)\n';
    const { evidence, settled } = await ladder(host, true);
    expect(settled.state).toBe('configured');
    const blocking = evidence.filter((e) => e.verdict !== 'proven');
    expect(blocking.map((e) => [e.step, e.verdict, e.reason, e.missingTest])).toEqual([
      ['verified', 'missing', 'HostKernel', "isolation/gvisor: a pod under handler runsc whose kernel is gvisor's"],
      [
        'verified',
        'missing',
        'NotGvisorKernel',
        "isolation/gvisor: a pod under handler runsc whose kernel is gvisor's",
      ],
    ]);
  });
});
