/**
 * Sandboxes that are Ready while their runtime is silent (runtime stand-in modes `none` and `hang`, test-cluster/README.md):
 * the adapter's runtime calls end at their own deadline with a typed outcome, over the direct transport and through the real
 * sandbox-router; none of them reports the runtime as answering.
 */
import { RUNTIME_ANNOTATION } from '../../../test-cluster/runtime.js';
import { KubeClient } from '../../../src/adapter/kubernetes/client.js';
import { KubeSessions } from '../../../src/adapter/kubernetes/sessions.js';
import { SandboxdClient } from '../../../src/adapter/runtime/sandboxd.js';
import { DirectTransport } from '../../../src/adapter/transports/direct.js';
import { RouterTransport } from '../../../src/adapter/transports/router.js';
import type { Observation } from '../../../src/adapter/types.js';
import { connect, freshNamespace, sandboxdPodTemplate, waitFor, type Cluster } from '../helpers.js';

const SBX = { group: 'agents.x-k8s.io', version: 'v1beta1', plural: 'sandboxes' };
let c: Cluster;
let ns: string;
let sessions: KubeSessions;

beforeAll(async () => {
  c = connect();
  ns = await freshNamespace(c, 'silent');
  sessions = new KubeSessions(KubeClient.connect({ kubeconfig: c.info.kubeconfig }));
}, 30_000);
afterAll(async () => {
  if (ns) await c.core.deleteNamespace({ name: ns });
});

async function readySandbox(name: string, mode: 'none' | 'hang'): Promise<Observation> {
  const created = (await c.custom.createNamespacedCustomObject({
    ...SBX,
    namespace: ns,
    body: {
      apiVersion: 'agents.x-k8s.io/v1beta1',
      kind: 'Sandbox',
      metadata: { name },
      spec: { podTemplate: sandboxdPodTemplate({ [RUNTIME_ANNOTATION]: mode }) },
    },
  })) as { metadata: { uid: string } };
  const obs = await waitFor(
    `Sandbox ${name} Ready`,
    30_000,
    async () => {
      const o = await sessions.observe({
        namespace: ns,
        name,
        via: 'sandbox',
        operationId: '',
        uid: created.metadata.uid,
      });
      return o.kind === 'ok' && o.value.phase === 'Ready' ? o.value : undefined;
    },
    250,
  );
  await new Promise((r) => setTimeout(r, 1000)); // let the stand-in and the router cache catch up with the pod
  return obs;
}

test('runtime silent (nothing listens): Ready Sandbox, but direct calls are refused and the router answers 5xx', async () => {
  const obs = await readySandbox('silent', 'none');
  const target = { namespace: ns, sandboxName: 'silent', podIP: obs.podIPs[0]! };
  const direct = new SandboxdClient(new DirectTransport(), target);
  const h = await direct.health(2000);
  expect(h.kind === 'failed' && h.error.category).toBe('unreachable');
  const e = await direct.execute(['echo', 'nonce'], { deadlineMs: 2000 });
  expect(e.kind === 'failed' && ['unreachable', 'timeout'].includes(e.error.category)).toBe(true);
  direct.close();
  const routed = new SandboxdClient(new RouterTransport(`http://127.0.0.1:${c.info.ports.routerHttp!}`), target);
  const r = await routed.health(5000);
  expect(r.kind).toBe('failed');
  if (r.kind === 'failed') {
    expect(r.error.category).toBe('runtime');
    expect(r.error.code).toBeGreaterThanOrEqual(500);
  }
}, 60_000);

test('runtime hangs (accepts, never answers): every call ends at its deadline as timeout', async () => {
  const obs = await readySandbox('hanging', 'hang');
  const target = { namespace: ns, sandboxName: 'hanging', podIP: obs.podIPs[0]! };
  const direct = new SandboxdClient(new DirectTransport(), target);
  for (const call of [() => direct.health(800), () => direct.execute(['echo', 'nonce'], { deadlineMs: 800 })]) {
    const started = Date.now();
    const r = await call();
    const took = Date.now() - started;
    expect(r.kind === 'failed' && r.error.category).toBe('timeout');
    expect(took).toBeGreaterThanOrEqual(700);
    expect(took).toBeLessThan(2500);
  }
  direct.close();
  const routed = new SandboxdClient(new RouterTransport(`http://127.0.0.1:${c.info.ports.routerHttp!}`), target);
  const started = Date.now();
  const r = await routed.health(1500);
  expect(r.kind === 'failed' && r.error.category).toBe('timeout');
  expect(Date.now() - started).toBeLessThan(3500);
}, 60_000);
