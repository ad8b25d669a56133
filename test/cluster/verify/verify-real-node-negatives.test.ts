/**
 * Node kind: the REAL node alone (a cluster of its own, `up.sh --real-node-only`): this file stops the cluster's
 * kube-router and creates a RuntimeClass named `gvisor`, neither of which may touch the shared cluster. Negatives,
 * each a live observation that is false while the capability stays below verified:
 * - NetworkPolicy: with kube-router running a pod the policy does not admit is refused on the target's port and an
 *   admitted one connects; with kube-router stopped and its rules flushed, the same denied pod connects
 *   (policies present, nothing enforced) and `network-isolation` stays below verified;
 * - a RuntimeClass `gvisor` whose handler is runc: the pod runs, its runtime answers, but dmesg inside names the host
 *   kernel, not gVisor, and `runtime-class/gvisor` stays below verified (`NotGvisorKernel`).
 */
import * as k8s from '@kubernetes/client-node';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { KubeClient } from '../../../src/adapter/kubernetes/client.js';
import { runVerify } from '../../../src/verify/index.js';
import { requirementsFor } from '../../../src/verify/requirements.js';
import { freshNamespace, waitFor, type Cluster } from '../helpers.js';
import { describeRealNode, kubeExec, NODE_TOOLS_IMAGE, ownRealNodeCluster, waitRunning } from '../real-node-helpers.js';
import { EXT, plan, templatePlan } from './verifier-env.js';

const own = ownRealNodeCluster('negatives');
const { runDir } = own;

/** Runs argv inside the node's network and mount namespaces (where kube-router's iptables rules live). */
function inNode(argv: string[]): { status: number | null; stdout: string; stderr: string } {
  const holder = readFileSync(path.join(runDir, 'pids', 'node-ns.pid'), 'utf8').trim();
  return spawnSync('nsenter', ['--target', holder, '--net', '--mount', '--', ...argv], { encoding: 'utf8' });
}

describeRealNode('negatives on a real-node-only cluster', () => {
  let c: Cluster;
  let ns: string;

  beforeAll(async () => {
    c = own.start();
    ns = await freshNamespace(c, 'vfyneg');
  }, 600_000);

  afterAll(() => {
    own.stop();
  });

  /** A pod running the node's tools image: `sleep`, or (`listen`) a busybox nc answering `reached` on port 8080. */
  function toolsPod(listen = false): k8s.V1PodSpec {
    return {
      terminationGracePeriodSeconds: 1,
      containers: [
        {
          name: 'main',
          image: NODE_TOOLS_IMAGE,
          imagePullPolicy: 'Never',
          command: listen ? ['/bin/nc', '-ll', '-p', '8080', '-e', '/bin/echo', 'reached'] : ['/bin/sleep', '3600'],
          ...(listen ? { ports: [{ containerPort: 8080 }] } : {}),
        },
      ],
    };
  }

  /** Dials `ip:8080` from pod `from` (busybox nc, 3 s connect timeout); true when the target's `reached` came back. */
  async function reaches(from: string, ip: string): Promise<boolean> {
    const r = await kubeExec(c, ns, from, 'main', ['/bin/sh', '-c', `/bin/nc -w 3 ${ip} 8080 </dev/null`]);
    return r.exitCode === 0 && r.stdout.trim() === 'reached';
  }

  test('kube-router stopped, its rules gone: the denied pod reaches the target and network-isolation stays below verified', async () => {
    // The target is a Sandbox's pod (the probe judges sandbox pods); the policy admits only role=admitted on 8080 and
    // denies all egress of the target.
    await c.custom.createNamespacedCustomObject({
      group: 'agents.x-k8s.io',
      version: 'v1beta1',
      namespace: ns,
      plural: 'sandboxes',
      body: {
        apiVersion: 'agents.x-k8s.io/v1beta1',
        kind: 'Sandbox',
        metadata: { name: 'target' },
        spec: {
          podTemplate: { metadata: { labels: { app: 'nettarget' } }, spec: toolsPod(true) },
        },
      },
    });
    await c.kc.makeApiClient(k8s.NetworkingV1Api).createNamespacedNetworkPolicy({
      namespace: ns,
      body: {
        metadata: { name: 'target-isolation' },
        spec: {
          podSelector: { matchLabels: { app: 'nettarget' } },
          policyTypes: ['Ingress', 'Egress'],
          ingress: [{ _from: [{ podSelector: { matchLabels: { role: 'admitted' } } }], ports: [{ port: 8080 }] }],
          egress: [],
        },
      },
    });
    for (const [name, labels] of [
      ['denied', {}],
      ['admitted', { role: 'admitted' }],
    ] as const)
      await c.core.createNamespacedPod({ namespace: ns, body: { metadata: { name, labels }, spec: toolsPod() } });
    const target = await waitFor('the target Sandbox pod', 120_000, async () => {
      const pods = await c.core.listNamespacedPod({ namespace: ns, labelSelector: 'app=nettarget' });
      const p = pods.items[0];
      return p?.status?.phase === 'Running' && p.status.podIP ? p : undefined;
    });
    const ip = target.status!.podIP!;
    await waitRunning(c, ns, 'denied');
    await waitRunning(c, ns, 'admitted');

    // Enforced: kube-router syncs the new policy within seconds; the admitted pod connects, the denied one does not.
    await waitFor('kube-router enforcing the policy', 60_000, async () =>
      (await reaches('admitted', ip)) && !(await reaches('denied', ip)) ? true : undefined,
    );

    // Stopped, and its rules flushed (a stopped kube-router leaves them behind): nothing enforces the policy.
    const pid = Number(readFileSync(path.join(runDir, 'pids', 'kube-router.pid'), 'utf8'));
    process.kill(pid, 'SIGTERM');
    await waitFor('kube-router gone', 30_000, async () => {
      try {
        process.kill(pid, 0);
        return undefined;
      } catch {
        return true;
      }
    });
    for (const chain of ['KUBE-ROUTER-FORWARD', 'KUBE-ROUTER-INPUT', 'KUBE-ROUTER-OUTPUT']) {
      const f = inNode(['iptables', '-w', '-F', chain]);
      expect({ chain, status: f.status, stderr: f.stderr }).toEqual({ chain, status: 0, stderr: '' });
      expect(inNode(['iptables', '-w', '-S', chain]).stdout.trim()).toBe(`-N ${chain}`);
    }
    // The policy is still stored; the pod it denies now reaches the target.
    await waitFor('the denied pod reaching the target', 30_000, async () =>
      (await reaches('denied', ip)) ? true : undefined,
    );

    const p = plan(c, [], {
      transport: 'port-forward',
      router: undefined,
      networkPolicies: [
        { namespace: ns, name: 'target-isolation', allowedEgress: [], ingressFrom: [], template: 'target' },
      ],
      requirements: requirementsFor(['network-isolation']),
      probeTimeoutMs: 10_000,
    });
    const { report } = await runVerify({
      plan: p,
      client: KubeClient.connect({ kubeconfig: c.info.kubeconfig }),
      controllerMode: 'external',
      progress: () => undefined,
    });
    const net = report.capabilities.find((r) => r.name === 'network-isolation')!;
    expect(net.state).not.toBe('verified');
    // Coverage holds by the API (the policy selects the pod, egress is closed) ...
    expect(net.evidence.filter((e) => e.reason === 'PodCovered').map((e) => e.subject)).toEqual([
      `pod ${ns}/${target.metadata!.name}`,
    ]);
    // ... and enforcement is the step it cannot pass: unknown, never proven.
    expect(net.evidence.filter((e) => e.step === 'verified').map((e) => [e.verdict, e.reason])).toEqual([
      ['unknown', 'NotTested'],
    ]);
    expect(net.nextReason).toBe('NotTested');
  }, 420_000);

  test('RuntimeClass gvisor whose handler is runc: the runtime answers, dmesg is not gVisor, runtime-class/gvisor below verified', async () => {
    const nodeApi = c.kc.makeApiClient(k8s.NodeV1Api);
    await nodeApi.createRuntimeClass({ body: { metadata: { name: 'gvisor' }, handler: 'runc' } });
    await c.custom.createNamespacedCustomObject({
      ...EXT,
      namespace: ns,
      plural: 'sandboxtemplates',
      body: {
        apiVersion: 'extensions.agents.x-k8s.io/v1beta1',
        kind: 'SandboxTemplate',
        metadata: { name: 'fake-gvisor', namespace: ns },
        spec: {
          podTemplate: {
            metadata: { labels: { app: 'sandbox' } },
            spec: {
              runtimeClassName: 'gvisor',
              terminationGracePeriodSeconds: 1,
              containers: [
                {
                  name: 'sandboxd',
                  image: NODE_TOOLS_IMAGE,
                  imagePullPolicy: 'Never',
                  args: ['--grpc-port=9090', '--rest-port=8080', '--root-dir=/workspace'],
                  ports: [{ containerPort: 8080 }, { containerPort: 9090 }],
                  volumeMounts: [{ name: 'workspace', mountPath: '/workspace' }],
                },
              ],
              volumes: [{ name: 'workspace', emptyDir: {} }],
            },
          },
        },
      },
    });
    const p = plan(c, [templatePlan(ns, 'fake-gvisor', 'gvisor')], {
      transport: 'port-forward',
      router: undefined,
      runtimeClasses: ['gvisor'],
      probeTimeoutMs: 10_000,
      readyTimeoutMs: 120_000,
      requirements: requirementsFor(['runtime-class/gvisor', 'runtime-exec', `template/${ns}/fake-gvisor`]),
    });
    const { report } = await runVerify({
      plan: p,
      client: KubeClient.connect({ kubeconfig: c.info.kubeconfig }),
      controllerMode: 'external',
      progress: () => undefined,
    });
    const exec = report.capabilities.find((r) => r.name === 'runtime-exec')!;
    const rc = report.capabilities.find((r) => r.name === 'runtime-class/gvisor')!;
    // The pod ran under the class on the real node and its runtime answered: only the isolation is missing.
    expect(exec.state).toBe('verified');
    expect(rc.evidence.find((e) => e.reason === 'RanUnderRuntimeClass')?.verdict).toBe('proven');
    const kernel = rc.evidence.find((e) => e.field === 'Execute(dmesg)')!;
    expect([kernel.step, kernel.verdict, kernel.reason]).toEqual(['verified', 'missing', 'NotGvisorKernel']);
    // what dmesg gave: the host kernel's refusal or its log under runc, never the gVisor boot line
    const seen = kernel.message.slice(kernel.message.lastIndexOf('; ') + 2);
    expect(seen).toMatch(/^exit \d+: /);
    expect(seen).not.toMatch(/Starting gVisor/);
    expect(rc.evidence.some((e) => e.reason === 'NoExtraIsolation' || e.reason === 'GvisorKernel')).toBe(false);
    expect({ state: rc.state, next: rc.nextReason }).toEqual({ state: 'configured', next: 'NotGvisorKernel' });
    expect(report.leftovers).toEqual([]);
  }, 300_000);
});
