/**
 * Node kind: the REAL node alone (a cluster of its own, `up.sh --real-node-only`): this file stops the cluster's
 * kube-router and creates a RuntimeClass named `gvisor`, neither of which may touch the shared cluster. Negatives,
 * each a live observation that is false while the capability stays below verified:
 * - NetworkPolicy: with kube-router running the verifier's enforcement test (the probe sandboxes and two fresh peers
 *   the policy denies to each other dial each other's listeners, every round refused while each port answers from its
 *   own pod) verifies `network-isolation`; with kube-router stopped and its rules flushed (policies present, nothing
 *   enforced) the same dials connect and the capability fails (`PolicyNotEnforced`), naming source pod, destination
 *   and policy;
 * - a RuntimeClass `gvisor` whose handler is runc: the pod runs, its runtime answers, but dmesg inside names the host
 *   kernel, not gVisor, and `runtime-class/gvisor` stays below verified (`HostKernel`).
 */
import * as k8s from '@kubernetes/client-node';
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { KubeClient } from '../../../src/adapter/kubernetes/client.js';
import { runVerify, type VerifyReport } from '../../../src/verify/index.js';
import { requirementsFor } from '../../../src/verify/requirements.js';
import { freshNamespace, waitFor, type Cluster } from '../helpers.js';
import { describeRealNode, ownRealNodeCluster, realNode, realNodeSandboxdTemplate } from '../real-node-helpers.js';
import { EXT, plan, templatePlan, withoutRouter } from './verifier-env.js';

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

  /** A SandboxTemplate running sandboxd on the node's tools image (busybox nc, bash), pods labelled app=nettarget. */
  const toolsTemplate = (name: string): Record<string, unknown> =>
    realNodeSandboxdTemplate(c, ns, name, {}, { labels: { app: 'nettarget' }, management: 'Unmanaged' });

  /** The verifier's network-isolation verdict for the two templates and the declared policy. */
  async function verifyNetwork(): Promise<{
    net: VerifyReport['capabilities'][number];
    leftovers: readonly string[];
  }> {
    const p = withoutRouter(
      plan(
        c,
        [templatePlan(ns, 'neta'), templatePlan(ns, 'netb')].map((t) => ({
          ...t,
          networkPolicyManagement: 'Unmanaged' as const,
        })),
        {
          transport: 'port-forward',
          networkPolicies: [
            { namespace: ns, name: 'target-isolation', allowedEgress: [], ingressFrom: [], template: 'neta' },
            { namespace: ns, name: 'target-isolation', allowedEgress: [], ingressFrom: [], template: 'netb' },
          ],
          requirements: requirementsFor(['network-isolation', 'runtime-exec']),
          probeTimeoutMs: 10_000,
          readyTimeoutMs: 120_000,
        },
      ),
    );
    const { report } = await runVerify({
      plan: p,
      client: KubeClient.connect({ kubeconfig: c.info.kubeconfig }),
      controllerMode: 'external',
      progress: () => undefined,
    });
    expect(report.capabilities.find((r) => r.name === 'runtime-exec')!.state).toBe('verified');
    return { net: report.capabilities.find((r) => r.name === 'network-isolation')!, leftovers: report.leftovers };
  }

  test('the verifier observes enforcement (verified); with kube-router stopped and its rules gone it fails, naming what was reachable', async () => {
    // Two templates whose pods the policy selects: ingress only from role=admitted on 8080, no egress at all. The
    // verifier's probe sandboxes of one are peers the policy denies to the other.
    for (const name of ['neta', 'netb'])
      await c.custom.createNamespacedCustomObject({
        ...EXT,
        namespace: ns,
        plural: 'sandboxtemplates',
        body: toolsTemplate(name),
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

    // Enforced: every round the denied sandbox is refused while the port answers from its own pod.
    const on = await verifyNetwork();
    const observed = on.net.evidence.find((e) => e.reason === 'EnforcementObserved');
    expect({ state: on.net.state, verdict: observed?.verdict, rounds: observed?.observed?.rounds }).toEqual({
      state: 'verified',
      verdict: 'proven',
      rounds: 5,
    });
    expect(on.leftovers).toEqual([]);

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

    // The policy is still stored; the verifier's denied sandbox now connects: failed, the evidence names the source
    // pod, the destination pod IP and port, and the policy that should have denied it.
    const off = await verifyNetwork();
    const leak = off.net.evidence.find((e) => e.step === 'verified' && e.verdict !== 'proven')!;
    expect({ state: off.net.state, next: off.net.nextReason, verdict: leak.verdict, reason: leak.reason }).toEqual({
      state: 'failed',
      next: 'PolicyNotEnforced',
      verdict: 'contradicted',
      reason: 'PolicyNotEnforced',
    });
    expect(leak.subject).toMatch(new RegExp(`^pod ${ns}/verify-\\w+-[pnm]-net[ab]-\\w+$`));
    const podNet = c.info.realNode!.podCIDR.split('.').slice(0, 3).join('\\.'); // a /24
    expect(leak.field).toMatch(new RegExp(`^dial ${podNet}\\.\\d+:\\d+$`));
    expect(leak.value).toBe('peer connected');
    expect(leak.objects).toContain(`${ns}/target-isolation`);
    expect(off.leftovers).toEqual([]);
  }, 600_000);

  test('RuntimeClass gvisor whose handler is runc: the runtime answers on the host kernel (HostKernel), runtime-class/gvisor below verified', async () => {
    const nodeApi = c.kc.makeApiClient(k8s.NodeV1Api);
    await nodeApi.createRuntimeClass({ body: { metadata: { name: 'gvisor' }, handler: 'runc' } });
    await c.custom.createNamespacedCustomObject({
      ...EXT,
      namespace: ns,
      plural: 'sandboxtemplates',
      body: realNodeSandboxdTemplate(c, ns, 'fake-gvisor', {}, { runtimeClassName: 'gvisor' }),
    });
    const p = withoutRouter(
      plan(c, [templatePlan(ns, 'fake-gvisor', 'gvisor')], {
        transport: 'port-forward',
        runtimeClasses: ['gvisor'],
        probeTimeoutMs: 10_000,
        readyTimeoutMs: 120_000,
        requirements: requirementsFor(['runtime-class/gvisor', 'runtime-exec', `template/${ns}/fake-gvisor`]),
      }),
    );
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
    // Case gvisor-evidence-markers: the runc pod reads the host's release, equal to the node's kernelVersion.
    const node = (await c.core.readNode({ name: realNode(c).name })).status?.nodeInfo?.kernelVersion;
    const host = rc.evidence.find((e) => e.reason === 'HostKernel')!;
    expect([host.step, host.verdict, host.value]).toEqual(['verified', 'missing', node]);
    const marker = rc.evidence.find((e) => e.reason === 'NotGvisorKernel')!;
    expect(marker.value).toMatch(/^Linux version /);
    expect(rc.evidence.some((e) => e.reason === 'NoExtraIsolation' || e.reason === 'GvisorKernel')).toBe(false);
    expect({ state: rc.state, next: rc.nextReason }).toEqual({ state: 'configured', next: 'HostKernel' });
    expect(report.leftovers).toEqual([]);
  }, 300_000);
});
