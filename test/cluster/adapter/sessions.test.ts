/**
 * The adapter's Kubernetes side against the real test cluster (Agent Sandbox v0.5.6 controller, kwok pods, the runtime
 * stand-in's real sandboxd per pod, the real sandbox-router): release detection, idempotent create by operation id, observe,
 * execution over the direct transport (standing in for port-forward, which needs a kubelet), router health, preconditioned
 * terminate.
 */
import * as k8s from '@kubernetes/client-node';
import { randomUUID } from 'node:crypto';
import { KubeCapabilityAdapter } from '../../../src/adapter/adapter.js';
import { KubeClient } from '../../../src/adapter/kubernetes/client.js';
import { detectRelease } from '../../../src/adapter/kubernetes/release.js';
import { OPERATION_ANNOTATION, OPERATION_LABEL } from '../../../src/adapter/kubernetes/resources.js';
import { operationHash, sessionName } from '../../../src/adapter/kubernetes/sessions.js';
import { SandboxdClient } from '../../../src/adapter/runtime/sandboxd.js';
import { DirectTransport } from '../../../src/adapter/transports/direct.js';
import { RouterTransport } from '../../../src/adapter/transports/router.js';
import type { ExecutionStatus, Observation, SessionRef, SupportState } from '../../../src/adapter/types.js';
import { connect, freshNamespace, sandboxdPodTemplate, waitFor, type Cluster } from '../helpers.js';

const EXT = { group: 'extensions.agents.x-k8s.io', version: 'v1beta1' };
let c: Cluster;
let ns: string;
let client: KubeClient;
const states = new Map<string, SupportState>();
let adapter: KubeCapabilityAdapter;

beforeAll(async () => {
  c = connect();
  ns = await freshNamespace(c, 'adapter');
  client = KubeClient.connect({ kubeconfig: c.info.kubeconfig });
  adapter = new KubeCapabilityAdapter({
    client,
    executions: {
      transport: new DirectTransport(),
      supportStates: (_cap, template) => states.get(template),
      runtimes: (template) => (template === `template/${ns}/sbx` ? { kind: 'sandboxd' } : undefined),
    },
    labels: { 'agentplane.dev/test': 'adapter' },
  });
  await c.custom.createNamespacedCustomObject({
    ...EXT,
    namespace: ns,
    plural: 'sandboxtemplates',
    body: {
      apiVersion: 'extensions.agents.x-k8s.io/v1beta1',
      kind: 'SandboxTemplate',
      metadata: { name: 'sbx' },
      spec: { podTemplate: sandboxdPodTemplate(), networkPolicyManagement: 'Unmanaged' },
    },
  });
  await c.custom.createNamespacedCustomObject({
    ...EXT,
    namespace: ns,
    plural: 'sandboxwarmpools',
    body: {
      apiVersion: 'extensions.agents.x-k8s.io/v1beta1',
      kind: 'SandboxWarmPool',
      metadata: { name: 'pool' },
      spec: { replicas: 1, sandboxTemplateRef: { name: 'sbx' } },
    },
  });
}, 30_000);
afterAll(async () => {
  if (ns) await c.core.deleteNamespace({ name: ns });
});

test('release detection: v0.5 from served versions, CRDs readable with their conversion stanza', async () => {
  const r = await detectRelease(client);
  expect(r.kind).toBe('ok');
  if (r.kind !== 'ok') return;
  expect(r.value.family).toBe('v0.5');
  expect(r.value.coreVersions).toEqual(expect.arrayContaining(['v1beta1', 'v1alpha1']));
  expect(r.value.extensionsVersions).toEqual(expect.arrayContaining(['v1beta1', 'v1alpha1']));
  expect(r.value.sandboxCrd).toMatchObject({
    served: expect.arrayContaining(['v1beta1']),
    storage: 'v1beta1',
    conversion: 'Webhook',
    caBundle: true,
  });
  const report = await adapter.capabilities('test');
  expect(report.capabilities.map((x) => [x.name, x.state, x.reason])).toEqual([
    ['sandbox-api', 'compatible', 'VersionServed'],
    ['extensions-api', 'compatible', 'VersionServed'],
    ['conversion', 'compatible', 'ConversionWebhookReady'],
  ]);
});

test('createFromTemplate refuses what v1beta1 cannot express or what does not exist', async () => {
  const noPool = await adapter.createFromTemplate({ namespace: ns, template: 'sbx' }, '', 'op-x');
  expect(noPool.kind === 'rejected' && noPool.reason).toBe('WarmPoolRequired');
  const missing = await adapter.createFromTemplate({ namespace: ns, template: 'sbx', warmPool: 'nope' }, '', 'op-x');
  expect(missing.kind === 'rejected' && missing.reason).toBe('WarmPoolNotFound');
  const wrongTemplate = await adapter.createFromTemplate(
    { namespace: ns, template: 'other', warmPool: 'pool' },
    '',
    'op-x',
  );
  expect(wrongTemplate.kind === 'rejected' && wrongTemplate.reason).toBe('WarmPoolServesOtherTemplate');
  const wrongVersion = await adapter.createFromTemplate(
    { namespace: ns, template: 'sbx', warmPool: 'pool' },
    '99',
    'op-x',
  );
  expect(wrongVersion.kind === 'rejected' && wrongVersion.reason).toBe('TemplateVersionMismatch');
  const claims = (await c.custom.listNamespacedCustomObject({ ...EXT, namespace: ns, plural: 'sandboxclaims' })) as {
    items: unknown[];
  };
  expect(claims.items).toHaveLength(0);
});

test('idempotent create, observe to Ready, exec over direct, health via router, preconditioned terminate', async () => {
  const op = `op-${randomUUID()}`;
  const scope = { namespace: ns, template: 'sbx', warmPool: 'pool' };
  const [a, b] = await Promise.all([
    adapter.createFromTemplate(scope, '1', op),
    adapter.createFromTemplate(scope, '1', op),
  ]);
  expect(a.kind).toBe('ok');
  // Same session. The template hash is in a ref only when its read saw the claim bound (≈ 30-70 ms after create here),
  // which one of two concurrent calls, or a later retry, may see and the other not.
  const session = (r: typeof a) =>
    r.kind === 'ok' ? { ...r.value, template: { ...r.value.template, hash: undefined, reason: '', message: '' } } : r;
  expect(session(b)).toEqual(session(a));
  const again = await adapter.createFromTemplate(scope, '1', op);
  expect(session(again)).toEqual(session(a));
  expect(
    new Set([a, b, again].flatMap((r) => (r.kind === 'ok' && r.value.template?.hash ? [r.value.template.hash] : [])))
      .size,
  ).toBeLessThanOrEqual(1);
  if (a.kind !== 'ok') return;
  const ref: SessionRef = a.value;
  expect(ref).toMatchObject({ namespace: ns, name: sessionName('pool', op), via: 'claim', operationId: op });
  expect(ref.uid).toMatch(/^[0-9a-f-]{36}$/);
  const listed = (await c.custom.listNamespacedCustomObject({
    ...EXT,
    namespace: ns,
    plural: 'sandboxclaims',
    labelSelector: `${OPERATION_LABEL}=${operationHash(op)}`,
  })) as { items: Array<{ metadata: { annotations: Record<string, string>; labels: Record<string, string> } }> };
  expect(listed.items).toHaveLength(1);
  expect(listed.items[0]!.metadata.annotations[OPERATION_ANNOTATION]).toBe(op);
  expect(listed.items[0]!.metadata.labels['agentplane.dev/test']).toBe('adapter');

  const obs: Observation = await waitFor(
    'session Ready',
    60_000,
    async () => {
      const o = await adapter.observe(ref);
      return o.kind === 'ok' && o.value.phase === 'Ready' ? o.value : undefined;
    },
    250,
  );
  expect(obs.sandboxName).toBeDefined();
  expect(obs.podIPs[0]).toMatch(/^127\./);
  expect(obs.reason).toBe('Ready');
  // prose: the message carries the controller's condition reason (upstream DependenciesReady) and the generation
  expect(obs.message).toMatch(/^bound Sandbox .*: Ready=True\/DependenciesReady at generation \d+$/);

  // Not verified yet: refused, never falls back.
  const refused = await adapter.startExecution('x-1', { session: ref, argv: ['true'], timeoutMs: 5000 });
  expect(refused).toMatchObject({ kind: 'unsupported', capability: 'runtime-exec', reason: 'RuntimeExecNotVerified' });
  states.set(`template/${ns}/sbx`, 'verified');
  const nonce = randomUUID();
  const started = await waitFor('stand-in sandboxd answering', 15_000, async () => {
    const s = await adapter.startExecution(`x-${nonce}`, { session: ref, argv: ['echo', nonce], timeoutMs: 5000 });
    return s.kind === 'ok' ? s : undefined;
  });
  expect(started.kind).toBe('ok');
  const status: ExecutionStatus = await waitFor('execution finished', 10_000, async () => {
    const q = await adapter.queryExecution(`x-${nonce}`);
    return q.kind === 'ok' && q.value.state !== 'running' ? q.value : undefined;
  });
  expect(status).toMatchObject({ state: 'succeeded', exitCode: 0, stdout: `${nonce}\n` });

  const viaRouter = new SandboxdClient(new RouterTransport(`http://127.0.0.1:${c.info.ports.routerHttp!}`), {
    namespace: ns,
    sandboxName: obs.sandboxName!,
  });
  const health = await waitFor('router /v1/health ok', 15_000, async () => {
    const h = await viaRouter.health(3000);
    return h.kind === 'ok' ? h : undefined;
  });
  expect(health.value.status).toBe('ok');

  const stale = await adapter.terminate(ref, '1');
  expect(stale.kind === 'rejected' && stale.reason).toBe('IntentVersionChanged');
  const deleted = await adapter.terminate(ref, await current(ref));
  expect(deleted).toEqual({ kind: 'ok', value: { ref, outcome: 'deleted' } });
  expect(await adapter.terminate(ref, '')).toEqual({ kind: 'ok', value: { ref, outcome: 'already-gone' } });
  const gone = await adapter.observe(ref);
  expect(gone.kind === 'ok' && gone.value.phase).toMatch(/^(Gone|Terminating)$/);
}, 120_000);

async function current(ref: SessionRef): Promise<string> {
  const obj = (await c.custom.getNamespacedCustomObject({
    ...EXT,
    namespace: ref.namespace,
    plural: 'sandboxclaims',
    name: ref.name,
  })) as k8s.KubernetesObject;
  return obj.metadata!.resourceVersion!;
}
