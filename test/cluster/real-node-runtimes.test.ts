/**
 * Node kind: the REAL node (kubelet + containerd, test-cluster/scripts/node.sh). RuntimeClasses really run: a pod under
 * a class with handler `runsc` boots a gVisor Sentry (its kernel log starts with the gVisor boot line at time 0 and
 * `uname -r` names a gVisor kernel), a pod without a class runs under runc, the default handler, on the host kernel.
 * Commands go through the API server's exec (API server -> kubelet -> containerd -> the runtime).
 */
import * as k8s from '@kubernetes/client-node';
import { gvisorBootLine } from '../../src/verify/probes/isolation.js';
import { connect, freshNamespace, type Cluster } from './helpers.js';
import {
  describeRealNode,
  kubeExec,
  NODE_TOOLS_IMAGE,
  onRealNode,
  realNode,
  waitRunning,
} from './real-node-helpers.js';

describeRealNode('RuntimeClasses on the real node', () => {
  let c: Cluster;
  let ns: string;
  const rcName = `gvisor-${Math.random().toString(36).slice(2, 7)}`;

  beforeAll(async () => {
    c = connect();
    ns = await freshNamespace(c, 'real-runtimes');
    await c.kc
      .makeApiClient(k8s.NodeV1Api)
      .createRuntimeClass({ body: { metadata: { name: rcName }, handler: 'runsc' } });
  });

  afterAll(async () => {
    await c.core.deleteNamespace({ name: ns }).catch(() => undefined);
    await c.kc
      .makeApiClient(k8s.NodeV1Api)
      .deleteRuntimeClass({ name: rcName })
      .catch(() => undefined);
  });

  function pod(name: string, runtimeClassName?: string): k8s.V1Pod {
    return {
      metadata: { name },
      spec: {
        ...onRealNode(realNode(c)),
        ...(runtimeClassName ? { runtimeClassName } : {}),
        terminationGracePeriodSeconds: 1,
        containers: [
          { name: 'main', image: NODE_TOOLS_IMAGE, imagePullPolicy: 'Never', command: ['/bin/sleep', '3600'] },
        ],
      },
    };
  }

  test('a pod under handler runsc boots gVisor; a pod under the default handler (runc) does not', async () => {
    await c.core.createNamespacedPod({ namespace: ns, body: pod('under-gvisor', rcName) });
    await c.core.createNamespacedPod({ namespace: ns, body: pod('under-runc') });
    const gv = await waitRunning(c, ns, 'under-gvisor');
    const rc = await waitRunning(c, ns, 'under-runc');
    expect(gv.spec?.nodeName).toBe(realNode(c).name);
    expect(rc.spec?.nodeName).toBe(realNode(c).name);
    expect(gv.status?.podIP).toMatch(/^10\.88\.0\.\d+$/);

    const gDmesg = await kubeExec(c, ns, 'under-gvisor', 'main', ['dmesg']);
    expect(gDmesg.exitCode).toBe(0);
    expect(gDmesg.stdout.split('\n')[0]).toMatch(/^\[\s*0\.000000\] Starting gVisor\.\.\.$/);
    expect(gvisorBootLine(gDmesg.stdout)).toBeDefined();
    const gUname = await kubeExec(c, ns, 'under-gvisor', 'main', ['uname', '-r']);
    expect(gUname.stdout.trim()).toMatch(/gvisor/);

    // runc: the host kernel. dmesg may be refused (kernel.dmesg_restrict); either way its first line is not gVisor's.
    const rDmesg = await kubeExec(c, ns, 'under-runc', 'main', ['dmesg']);
    expect(gvisorBootLine(rDmesg.stdout)).toBeUndefined();
    expect(rDmesg.stdout).not.toMatch(/Starting gVisor/);
    const rUname = await kubeExec(c, ns, 'under-runc', 'main', ['uname', '-r']);
    const kernel = (await c.core.readNode({ name: realNode(c).name })).status?.nodeInfo?.kernelVersion;
    expect(rUname.stdout.trim()).toBe(kernel);
    expect(rUname.stdout.trim()).not.toBe(gUname.stdout.trim());
  }, 180000);
});
