/**
 * Node kind: the REAL node (kubelet + containerd + runc/runsc, test-cluster/scripts/node.sh). The verifier over its
 * default transport (port-forward: API server -> kubelet -> containerd -> the pod) against sandboxd running in real
 * containers:
 * - a template under a RuntimeClass with handler `runsc`: runtime-exec verified, runtime-class verified from the gVisor
 *   boot line that `dmesg` prints inside the sandbox;
 * - a RuntimeClass whose handler containerd does not know: the real FailedCreatePodSandBox event, runtime-class not verified;
 * - a runtime silent inside a real container (the container runs, sandboxd does not): runtime-exec stays below verified.
 */
import * as k8s from '@kubernetes/client-node';
import { KubeClient } from '../../../src/adapter/kubernetes/client.js';
import { runVerify } from '../../../src/verify/index.js';
import { requirementsFor } from '../../../src/verify/requirements.js';
import { connect, freshNamespace, type Cluster } from '../helpers.js';
import { describeRealNode, NODE_TOOLS_IMAGE, onRealNode, realNode } from '../real-node-helpers.js';
import { EXT, plan, templatePlan } from './verifier-env.js';

describeRealNode('the verifier on the real node', () => {
  let c: Cluster;
  let ns: string;
  const suffix = Math.random().toString(36).slice(2, 7);
  const gvisor = `real-gvisor-${suffix}`;
  const unknown = `real-unknown-${suffix}`;
  const nodeApi = () => c.kc.makeApiClient(k8s.NodeV1Api);

  /** A SandboxTemplate whose pods run sandboxd (or, `silent`, only a sleeping shell) on the real node. */
  function template(name: string, runtimeClassName: string | undefined, silent = false): Record<string, unknown> {
    const container = silent
      ? {
          name: 'sandboxd',
          image: NODE_TOOLS_IMAGE,
          imagePullPolicy: 'Never',
          command: ['/bin/sleep', '3600'],
          ports: [{ containerPort: 8080 }, { containerPort: 9090 }],
        }
      : {
          name: 'sandboxd',
          image: NODE_TOOLS_IMAGE,
          imagePullPolicy: 'Never',
          args: ['--grpc-port=9090', '--rest-port=8080', '--root-dir=/workspace'],
          ports: [{ containerPort: 8080 }, { containerPort: 9090 }],
          volumeMounts: [{ name: 'workspace', mountPath: '/workspace' }],
        };
    return {
      apiVersion: 'extensions.agents.x-k8s.io/v1beta1',
      kind: 'SandboxTemplate',
      metadata: { name, namespace: ns },
      spec: {
        podTemplate: {
          metadata: { labels: { app: 'sandbox' } },
          spec: {
            ...onRealNode(realNode(c)),
            ...(runtimeClassName ? { runtimeClassName } : {}),
            terminationGracePeriodSeconds: 1,
            containers: [container],
            volumes: [{ name: 'workspace', emptyDir: {} }],
          },
        },
      },
    };
  }

  beforeAll(async () => {
    c = connect();
    ns = await freshNamespace(c, 'vfyreal');
    await nodeApi().createRuntimeClass({ body: { metadata: { name: gvisor }, handler: 'runsc' } });
    await nodeApi().createRuntimeClass({ body: { metadata: { name: unknown }, handler: 'no-such-handler' } });
    for (const [name, rc, silent] of [
      ['gv', gvisor, false],
      ['nohandler', unknown, false],
      ['silent', undefined, true],
    ] as const) {
      await c.custom.createNamespacedCustomObject({
        ...EXT,
        namespace: ns,
        plural: 'sandboxtemplates',
        body: template(name, rc, silent),
      });
    }
  }, 60_000);

  afterAll(async () => {
    await c.core.deleteNamespace({ name: ns }).catch(() => undefined);
    await nodeApi()
      .deleteRuntimeClass({ name: gvisor })
      .catch(() => undefined);
    await nodeApi()
      .deleteRuntimeClass({ name: unknown })
      .catch(() => undefined);
  });

  test('gVisor on the real node, over port-forward: runtime-exec and runtime-class verified from inside the sandbox', async () => {
    const p = plan(c, [templatePlan(ns, 'gv', gvisor)], {
      transport: 'port-forward',
      runtimeClasses: [gvisor],
      probeTimeoutMs: 10_000,
      readyTimeoutMs: 120_000,
      requirements: requirementsFor([`runtime-class/${gvisor}`, 'runtime-exec', `template/${ns}/gv`]),
    });
    const { report } = await runVerify({
      plan: p,
      client: KubeClient.connect({ kubeconfig: c.info.kubeconfig }),
      controllerMode: 'external',
      progress: () => undefined,
    });
    const rc = report.capabilities.find((r) => r.name === `runtime-class/${gvisor}`)!;
    const exec = report.capabilities.find((r) => r.name === 'runtime-exec')!;
    expect({ exec: exec.state, next: exec.next ?? null }).toEqual({ exec: 'verified', next: null });
    // Every nonce of the sample echoed exactly, in a row, over port-forward (a sample of at least two).
    const echoed = exec.evidence.filter((e) => e.step === 'verified' && e.reason === 'NonceEchoed');
    expect(echoed.map((e) => e.verdict)).toEqual(['proven']);
    expect(echoed[0]!.value).toMatch(/^([2-9]|\d\d+)\/\1$/);
    expect(
      rc.evidence.some(
        (e) =>
          e.step === 'verified' && e.verdict === 'proven' && e.reason === 'RanUnderRuntimeClass' && e.value === gvisor,
      ),
    ).toBe(true);
    // Case gvisor-evidence-markers: the kernel inside differs from the node's, and a gVisor marker read from a file.
    const node = (await c.core.readNode({ name: realNode(c).name })).status?.nodeInfo?.kernelVersion;
    const kernel = rc.evidence.find((e) => e.step === 'verified' && e.reason === 'KernelDiffersFromNode');
    expect(kernel?.verdict).toBe('proven');
    expect(kernel?.value).not.toBe(node);
    const marker = rc.evidence.find((e) => e.step === 'verified' && e.reason === 'GvisorKernel');
    expect([marker?.verdict, marker?.field]).toEqual(['proven', '/proc/version']);
    expect(marker?.value).toMatch(/^Linux version \S+ #1 SMP Sun Jan 10 15:06:54 PST 2016$/);
    expect(rc.state).toBe('verified');
    expect(report.leftovers).toEqual([]);
  }, 240000);

  test('a RuntimeClass whose handler containerd does not know: the real FailedCreatePodSandBox, runtime-class stays below verified', async () => {
    const p = plan(c, [templatePlan(ns, 'nohandler', unknown)], {
      transport: 'port-forward',
      runtimeClasses: [unknown],
      probeTimeoutMs: 10_000,
      readyTimeoutMs: 60_000,
      requirements: requirementsFor([`runtime-class/${unknown}`, 'runtime-exec', `template/${ns}/nohandler`]),
    });
    const started = Date.now();
    const { report } = await runVerify({
      plan: p,
      client: KubeClient.connect({ kubeconfig: c.info.kubeconfig }),
      controllerMode: 'external',
      progress: () => undefined,
    });
    const tookMs = Date.now() - started;
    const rc = report.capabilities.find((r) => r.name === `runtime-class/${unknown}`)!;
    expect(rc.state).not.toBe('verified');
    // Case test-node-runsc-registration: the wait ends at the first permanent FailedCreatePodSandBox, not at the
    // 60 s ready timeout.
    const tpl = report.capabilities.find((r) => r.name === `template/${ns}/nohandler`)!;
    expect(tpl.evidence.some((e) => e.reason === 'ProbePodCannotStart')).toBe(true);
    expect(tookMs).toBeLessThan(30_000);
    console.log(`verify with an unknown handler: ${tookMs} ms (ready timeout 60000 ms)`);
    const events = await c.core.listNamespacedEvent({ namespace: ns, fieldSelector: 'reason=FailedCreatePodSandBox' });
    expect(events.items.length).toBeGreaterThan(0);
    // prose: the kubelet's own event message is the observation (containerd names the unknown handler)
    expect(events.items[0]!.message).toMatch(/no runtime for "no-such-handler" is configured/);
    const text = JSON.stringify(
      report.capabilities
        .filter((r) => r.name === `runtime-class/${unknown}` || r.name === `template/${ns}/nohandler`)
        .map((r) => r.evidence),
    );
    expect(text).toMatch(/FailedCreatePodSandBox/);
  }, 240000);

  test('a runtime silent inside a real container: the pod runs, runtime-exec stays below verified', async () => {
    const p = plan(c, [templatePlan(ns, 'silent')], {
      transport: 'port-forward',
      probeTimeoutMs: 5_000,
      readyTimeoutMs: 90_000,
      requirements: requirementsFor(['runtime-exec', `template/${ns}/silent`]),
    });
    const { report } = await runVerify({
      plan: p,
      client: KubeClient.connect({ kubeconfig: c.info.kubeconfig }),
      controllerMode: 'external',
      progress: () => undefined,
    });
    const exec = report.capabilities.find((r) => r.name === 'runtime-exec')!;
    expect(exec.state).toBe('configured');
    // The pod became Ready (a real container ran) but no command was answered over port-forward.
    expect(
      exec.evidence.some(
        (e) => e.step === 'verified' && e.verdict === 'proven' && e.field === 'status.conditions[Ready]',
      ),
    ).toBe(true);
    const proven = exec.evidence.filter((e) => e.step === 'verified' && e.verdict === 'proven').map((e) => e.reason);
    for (const answered of ['NonceEchoed', 'RuntimeAnswered']) expect(proven).not.toContain(answered);
    expect(exec.nextReason).not.toBeNull();
    expect(report.leftovers).toEqual([]);
  }, 240000);
});
