/**
 * Node kind: the REAL node (kubelet + containerd + runsc/runc, test-cluster/scripts/node.sh). A sandbox killed for
 * memory is reported by the adapter as `oom-killed` (`RuntimeOOMKilled`, layer `node`) with the kubelet's exit code and
 * the container's memory limit, not as the closed connection the call itself saw. Real parts only: sandboxd v0.5.6 in a
 * Sandbox with `limits.memory: 64Mi`, the adapter's default transport (port-forward through the API server, kubelet
 * and containerd), the command `dd bs=300M` that allocates past the limit.
 * - Under gVisor (handler runsc) the sandbox's memory is the Sentry's, so the host's OOM killer takes the whole
 *   sandbox, sandboxd with it: the kubelet reports the container `OOMKilled`.
 * - Under runc on this node's cgroup v1 the kernel kills only the largest process of the cgroup, the command; sandboxd
 *   lives on and answers: the container is not OOMKilled and the adapter does not say it was (the observation is
 *   false, so the ending stays the runtime's own `RuntimeNoExitStatus`).
 */
import * as k8s from '@kubernetes/client-node';
import { KubeCapabilityAdapter } from '../../../src/adapter/adapter.js';
import { KubeClient } from '../../../src/adapter/kubernetes/client.js';
import { PortForwardTransport } from '../../../src/adapter/transports/port-forward.js';
import type { ExecutionStatus, SessionRef } from '../../../src/adapter/types.js';
import { connect, freshNamespace, waitFor, type Cluster } from '../helpers.js';
import { describeRealNode, NODE_TOOLS_IMAGE, onRealNode, realNode } from '../real-node-helpers.js';

const SBX = { group: 'agents.x-k8s.io', version: 'v1beta1', plural: 'sandboxes' };
const LIMIT = '64Mi';
const HOG = ['sh', '-c', 'dd if=/dev/zero of=/dev/null bs=300M count=1'];

describeRealNode('case runtime-oom-killed (real node)', () => {
  let c: Cluster;
  let ns: string;
  let adapter: KubeCapabilityAdapter;
  let transport: PortForwardTransport;
  const rc = `oom-gvisor-${Math.random().toString(36).slice(2, 7)}`;

  beforeAll(async () => {
    c = connect();
    ns = await freshNamespace(c, 'oom');
    await c.kc.makeApiClient(k8s.NodeV1Api).createRuntimeClass({ body: { metadata: { name: rc }, handler: 'runsc' } });
    const client = KubeClient.connect({ kubeconfig: c.info.kubeconfig });
    transport = new PortForwardTransport(client);
    adapter = new KubeCapabilityAdapter({
      client,
      executions: {
        transport,
        // The gate is the verifier's; this test is about how a call ends, so runtime-exec counts as verified.
        supportStates: () => 'verified',
        runtimes: () => ({ kind: 'sandboxd' }),
      },
    });
  }, 60_000);

  afterAll(async () => {
    await transport?.close();
    if (ns) await c.core.deleteNamespace({ name: ns }).catch(() => undefined);
    await c.kc
      .makeApiClient(k8s.NodeV1Api)
      .deleteRuntimeClass({ name: rc })
      .catch(() => undefined);
  });

  /** A Ready Sandbox running sandboxd under `runtimeClassName` (runc when undefined) with a 64Mi memory limit. */
  async function sandbox(name: string, runtimeClassName?: string): Promise<SessionRef> {
    const created = (await c.custom.createNamespacedCustomObject({
      ...SBX,
      namespace: ns,
      body: {
        apiVersion: 'agents.x-k8s.io/v1beta1',
        kind: 'Sandbox',
        // The template annotation a claim's Sandbox carries: the adapter runs commands only in known templates.
        metadata: { name, annotations: { 'agents.x-k8s.io/sandbox-template-ref': 'oom' } },
        spec: {
          podTemplate: {
            spec: {
              ...onRealNode(realNode(c)),
              ...(runtimeClassName ? { runtimeClassName } : {}),
              terminationGracePeriodSeconds: 1,
              containers: [
                {
                  name: 'sandboxd',
                  image: NODE_TOOLS_IMAGE,
                  imagePullPolicy: 'Never',
                  args: ['--grpc-port=9090', '--rest-port=8080', '--root-dir=/workspace'],
                  ports: [{ containerPort: 8080 }, { containerPort: 9090 }],
                  resources: { limits: { memory: LIMIT } },
                  volumeMounts: [{ name: 'workspace', mountPath: '/workspace' }],
                },
              ],
              volumes: [{ name: 'workspace', emptyDir: {} }],
            },
          },
        },
      },
    })) as { metadata: { uid: string } };
    const ref: SessionRef = { namespace: ns, name, via: 'sandbox', operationId: '', uid: created.metadata.uid };
    await waitFor(`Sandbox ${name} Ready`, 90_000, async () => {
      const o = await adapter.observe(ref);
      return o.kind === 'ok' && o.value.phase === 'Ready' ? true : undefined;
    });
    return ref;
  }

  async function run(session: SessionRef, argv: string[]): Promise<ExecutionStatus> {
    const id = `oom-${Math.random().toString(36).slice(2, 10)}`;
    const started = await adapter.startExecution(id, { session, argv, timeoutMs: 60_000 });
    expect(started.kind).toBe('ok');
    return waitFor(`execution ${id} ended`, 90_000, async () => {
      const q = await adapter.queryExecution(id);
      return q.kind === 'ok' && q.value.state !== 'running' ? q.value : undefined;
    });
  }

  test('under gVisor the sandbox is killed for memory: oom-killed, RuntimeOOMKilled, the kubelet exit code, limit 64Mi, bound to the pod UID', async () => {
    const session = await sandbox('gvisor-hog', rc);
    expect((await run(session, ['echo', 'alive'])).outcome).toMatchObject({ kind: 'completed', exitCode: 0 });
    const status = await run(session, HOG);
    const pod = await c.core.readNamespacedPod({ namespace: ns, name: 'gvisor-hog' });
    const cs = pod.status!.containerStatuses!.find((s) => s.name === 'sandboxd')!;
    const terminated = cs.state?.terminated ?? cs.lastState?.terminated;
    expect(terminated?.reason).toBe('OOMKilled');
    expect(status.state).toBe('failed');
    expect(status.exitCode).toBeUndefined();
    expect(status.outcome).toEqual({
      kind: 'oom-killed',
      reason: 'RuntimeOOMKilled',
      layer: 'node',
      exitCode: terminated!.exitCode,
      container: 'sandboxd',
      podUid: pod.metadata!.uid!,
      memoryLimitBytes: 64 * 2 ** 20,
      message: expect.any(String),
    });
    process.stdout.write(
      `oom-killed under gVisor: kubelet exit ${terminated!.exitCode}, call ended after ${status.durationMs} ms\n`,
    );
  }, 240_000);

  test('under runc only the command is killed and sandboxd answers: not oom-killed, the runtime says RuntimeNoExitStatus', async () => {
    const session = await sandbox('runc-hog');
    const status = await run(session, HOG);
    expect(status.outcome).toMatchObject({ kind: 'runtime-error', reason: 'RuntimeNoExitStatus' });
    const pod = await c.core.readNamespacedPod({ namespace: ns, name: 'runc-hog' });
    const cs = pod.status!.containerStatuses!.find((s) => s.name === 'sandboxd')!;
    expect(cs.state?.running).toBeDefined();
    expect(cs.restartCount).toBe(0);
    // The runtime still answers in the same container.
    expect((await run(session, ['echo', 'alive'])).outcome).toMatchObject({ kind: 'completed', exitCode: 0 });
  }, 240_000);
});
