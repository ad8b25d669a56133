/**
 * Case suspended-condition-stale on the real v0.5.6 controller: a Sandbox suspended through `spec.operatingMode`
 * observes as Suspended, and `startExecution` returns the typed `SessionSuspended` without touching the transport; after
 * resume (the controller leaves its own Suspended condition beside Ready) it is Running and the command runs. The
 * case's exact condition arrays (stale Suspended=True at an older generation, either order) are judged in
 * test/unit/adapter/phase.test.ts style below, as the API server keeps whatever status the controller last wrote.
 */
import { KubeCapabilityAdapter } from '../../../src/adapter/adapter.js';
import { KubeClient } from '../../../src/adapter/kubernetes/client.js';
import { sandboxPhase, type SandboxObject } from '../../../src/adapter/kubernetes/phase.js';
import { KubeSessions } from '../../../src/adapter/kubernetes/sessions.js';
import { DirectTransport } from '../../../src/adapter/transports/direct.js';
import type { RuntimeTarget, Transport } from '../../../src/adapter/transports/types.js';
import type { ExecutionStatus, SessionRef } from '../../../src/adapter/types.js';
import { connect, freshNamespace, sandboxdPodTemplate, waitFor, type Cluster } from '../helpers.js';

const SBX = { group: 'agents.x-k8s.io', version: 'v1beta1', plural: 'sandboxes' };
const TEMPLATE_REF = 'agents.x-k8s.io/sandbox-template-ref';

/** The direct transport, counting every endpoint it hands out (each runtime call asks for one). */
class CountingTransport implements Transport {
  readonly kind = 'direct' as const;
  calls = 0;
  private readonly inner = new DirectTransport();
  http(target: RuntimeTarget, port: number) {
    this.calls += 1;
    return this.inner.http(target, port);
  }
  grpc(target: RuntimeTarget, port: number) {
    this.calls += 1;
    return this.inner.grpc(target, port);
  }
  close() {
    return this.inner.close();
  }
}

let c: Cluster;
let ns: string;

beforeAll(async () => {
  c = connect();
  ns = await freshNamespace(c, 'case17');
});
afterAll(async () => {
  if (ns) await c.core.deleteNamespace({ name: ns });
});

test('suspended Sandbox: startExecution is SessionSuspended with no runtime call; resumed: Running and executes', async () => {
  const client = KubeClient.connect({ kubeconfig: c.info.kubeconfig });
  const transport = new CountingTransport();
  const adapter = new KubeCapabilityAdapter({
    client,
    executions: {
      transport,
      supportStates: () => 'verified',
      runtimes: (t) => (t === `template/${ns}/sbx` ? { kind: 'sandboxd' } : undefined),
    },
  });
  const sessions = new KubeSessions(client);
  const created = (await c.custom.createNamespacedCustomObject({
    ...SBX,
    namespace: ns,
    body: {
      apiVersion: 'agents.x-k8s.io/v1beta1',
      kind: 'Sandbox',
      metadata: { name: 's1', annotations: { [TEMPLATE_REF]: 'sbx' } },
      spec: { podTemplate: sandboxdPodTemplate() },
    },
  })) as { metadata: { uid: string } };
  const ref: SessionRef = { namespace: ns, name: 's1', via: 'sandbox', operationId: '', uid: created.metadata.uid };
  await waitFor(
    's1 Ready',
    60_000,
    async () => {
      const o = await adapter.observe(ref);
      return o.kind === 'ok' && o.value.phase === 'Ready' ? o.value : undefined;
    },
    250,
  );

  expect((await sessions.setSuspended(ns, 's1', true)).kind).toBe('ok');
  const suspended = await waitFor(
    's1 Suspended',
    60_000,
    async () => {
      const o = await adapter.observe(ref);
      return o.kind === 'ok' && o.value.phase === 'Suspended' ? o.value : undefined;
    },
    250,
  );
  expect(suspended.reason).toBe('Suspended');
  // prose: the message carries the Suspended condition the controller wrote (v0.5+), not the v0.4 replicas rule
  expect(suspended.message).toMatch(/^Suspended=True\//);
  expect(suspended.podIPs).toEqual([]);
  const before = transport.calls;
  const refused = await adapter.startExecution('case17-suspended', {
    session: ref,
    argv: ['echo', 'x'],
    timeoutMs: 5000,
  });
  expect(refused).toMatchObject({ kind: 'rejected', reason: 'SessionSuspended' });
  expect(transport.calls).toBe(before);
  expect((await adapter.queryExecution('case17-suspended')).kind === 'rejected').toBe(true);

  expect((await sessions.setSuspended(ns, 's1', false)).kind).toBe('ok');
  await waitFor(
    's1 Ready again',
    60_000,
    async () => {
      const o = await adapter.observe(ref);
      return o.kind === 'ok' && o.value.phase === 'Ready' ? o.value : undefined;
    },
    250,
  );
  const started = await waitFor(
    'sandboxd answering after resume',
    20_000,
    async () => {
      const s = await adapter.startExecution(`case17-${Date.now()}`, {
        session: ref,
        argv: ['echo', 'resumed'],
        timeoutMs: 5000,
      });
      return s.kind === 'ok' ? s.value : undefined;
    },
    250,
  );
  const status: ExecutionStatus = await waitFor('execution finished', 10_000, async () => {
    const q = await adapter.queryExecution(started.executionId);
    return q.kind === 'ok' && q.value.state !== 'running' ? q.value : undefined;
  });
  expect(status).toMatchObject({ state: 'succeeded', exitCode: 0, stdout: 'resumed\n' });
  expect(transport.calls).toBeGreaterThan(before);
}, 180_000);

test("the case's condition arrays: phase from operatingMode plus current-generation conditions, in either order", () => {
  const stale = { type: 'Suspended', status: 'True', reason: 'PodTerminated', observedGeneration: 4 };
  const ready = { type: 'Ready', status: 'True', reason: 'DependenciesReady', observedGeneration: 5 };
  for (const conditions of [
    [stale, ready],
    [ready, stale],
  ]) {
    const sb: SandboxObject = {
      metadata: { name: 's1', generation: 5 },
      spec: { operatingMode: 'Running' },
      status: { conditions },
    };
    expect(sandboxPhase(sb, 'v0.5').phase).toBe('Ready');
  }
  const suspendedNow = { type: 'Suspended', status: 'True', reason: 'PodTerminated', observedGeneration: 5 };
  const notReady = { type: 'Ready', status: 'False', reason: 'SandboxSuspended', observedGeneration: 5 };
  for (const conditions of [
    [suspendedNow, notReady],
    [notReady, suspendedNow],
  ]) {
    const sb: SandboxObject = {
      metadata: { name: 's1', generation: 5 },
      spec: { operatingMode: 'Suspended' },
      status: { conditions },
    };
    expect(sandboxPhase(sb, 'v0.5').phase).toBe('Suspended');
  }
});
