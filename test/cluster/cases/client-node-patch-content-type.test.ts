/**
 * Case client-node-patch-content-type on the real API server: the adapter suspends a v1beta1 Sandbox by JSON merge
 * patch sent as `application/merge-patch+json` (client-node 1.x `setHeaderOptions`); the field changes and
 * controller-written fields survive. A merge-shaped body under client-node's default JSON-patch media type is refused,
 * and the typed error names the content type that was sent.
 */
import * as k8s from '@kubernetes/client-node';
import { KubeClient } from '../../../src/adapter/kubernetes/client.js';
import { KubeSessions } from '../../../src/adapter/kubernetes/sessions.js';
import { connect, freshNamespace, readyCondition, sandboxdPodTemplate, waitFor, type Cluster } from '../helpers.js';

const SBX = { group: 'agents.x-k8s.io', version: 'v1beta1', plural: 'sandboxes' };
let c: Cluster;
let ns: string;
let sessions: KubeSessions;

beforeAll(async () => {
  c = connect();
  ns = await freshNamespace(c, 'case23');
  sessions = new KubeSessions(KubeClient.connect({ kubeconfig: c.info.kubeconfig }));
  await c.custom.createNamespacedCustomObject({
    ...SBX,
    namespace: ns,
    body: {
      apiVersion: 'agents.x-k8s.io/v1beta1',
      kind: 'Sandbox',
      metadata: { name: 's1' },
      spec: { podTemplate: sandboxdPodTemplate() },
    },
  });
  await waitFor('Sandbox s1 Ready', 30_000, async () =>
    readyCondition(await c.custom.getNamespacedCustomObject({ ...SBX, namespace: ns, name: 's1' }))?.status === 'True'
      ? true
      : undefined,
  );
}, 60_000);
afterAll(async () => {
  if (ns) await c.core.deleteNamespace({ name: ns });
});

type Sandbox = {
  metadata: { generation: number };
  spec: { operatingMode?: string; podTemplate?: { spec?: { containers?: unknown[] } } };
  status?: { conditions?: Array<{ type: string; status: string; reason?: string }> };
};

test('merge patch with an explicit media type suspends the Sandbox; spec and status written by others survive', async () => {
  const before = (await c.custom.getNamespacedCustomObject({ ...SBX, namespace: ns, name: 's1' })) as Sandbox;
  const r = await sessions.setSuspended(ns, 's1', true);
  expect(r.kind).toBe('ok');
  const after = (await c.custom.getNamespacedCustomObject({ ...SBX, namespace: ns, name: 's1' })) as Sandbox;
  expect(after.spec.operatingMode).toBe('Suspended');
  expect(after.metadata.generation).toBe(before.metadata.generation + 1);
  expect(after.spec.podTemplate?.spec?.containers).toEqual(before.spec.podTemplate?.spec?.containers);
  expect(after.status?.conditions?.length).toBeGreaterThan(0);
  const suspended = await waitFor('Suspended=True', 30_000, async () => {
    const o = (await c.custom.getNamespacedCustomObject({ ...SBX, namespace: ns, name: 's1' })) as Sandbox;
    return o.status?.conditions?.find((x) => x.type === 'Suspended' && x.status === 'True') ? o : undefined;
  });
  expect(suspended.spec.operatingMode).toBe('Suspended');
  expect((await sessions.setSuspended(ns, 's1', false)).kind).toBe('ok');
  const resumed = (await c.custom.getNamespacedCustomObject({ ...SBX, namespace: ns, name: 's1' })) as Sandbox;
  expect(resumed.spec.operatingMode).toBe('Running');
}, 60_000);

test('the same body under the default JSON-patch media type is refused with a typed error naming that content type', async () => {
  const client = sessions.client;
  const r = await client.call(
    { verb: 'patch', resource: 'sandboxes.agents.x-k8s.io', contentType: 'application/json-patch+json' },
    () =>
      client.api(k8s.CustomObjectsApi).patchNamespacedCustomObject({
        ...SBX,
        namespace: ns,
        name: 's1',
        body: { spec: { operatingMode: 'Suspended' } },
      }),
  );
  expect(r.kind).toBe('failed');
  if (r.kind === 'failed') {
    expect(r.error.category).toBe('invalid');
    expect([400, 415, 422]).toContain(r.error.code);
    expect(r.error.request?.contentType).toBe('application/json-patch+json');
  }
  const still = (await c.custom.getNamespacedCustomObject({ ...SBX, namespace: ns, name: 's1' })) as Sandbox;
  expect(still.spec.operatingMode).toBe('Running');
});
