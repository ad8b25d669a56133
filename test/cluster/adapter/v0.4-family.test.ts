/**
 * Release family v0.4 on the real v0.4.6 controller (v1alpha1 only): new provisioning stops (`createFromTemplate` is
 * `unsupported`) while observe, suspend and terminate keep working. A second cluster beside the global one (own run dir
 * `test-cluster/.run-adapter-v0.4.6`, pod IPs 127.12.x.y), started and stopped here.
 */
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { KubeClient } from '../../../src/adapter/kubernetes/client.js';
import { KubeSessions } from '../../../src/adapter/kubernetes/sessions.js';
import type { SessionRef } from '../../../src/adapter/types.js';
import { connect, freshNamespace, secondClusterEnv, waitFor, type Cluster } from '../helpers.js';

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const runDir = path.join(repo, 'test-cluster', '.run-adapter-v0.4.6');
// kwok nodes only: this v0.4-family cluster needs no real node. Its own release and pod net, never the parent's.
const env = secondClusterEnv(runDir, { release: 'v0.4.6', podNet: 12 });
const SBX = { group: 'agents.x-k8s.io', version: 'v1alpha1', plural: 'sandboxes' };
let c: Cluster;
let ns: string;
let sessions: KubeSessions;

beforeAll(async () => {
  const up = spawnSync('bash', ['test-cluster/scripts/up.sh', '--release', 'v0.4.6'], {
    cwd: repo,
    env,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  if (up.status !== 0)
    throw new Error(`starting the v0.4.6 cluster failed (exit ${up.status}); logs in ${runDir}/logs`);
  c = connect(runDir);
  ns = await freshNamespace(c, 'adapter46');
  sessions = new KubeSessions(KubeClient.connect({ kubeconfig: c.info.kubeconfig }));
}, 180_000);
afterAll(() => {
  spawnSync('bash', ['test-cluster/scripts/down.sh'], { cwd: repo, env, stdio: ['ignore', 'inherit', 'inherit'] });
}, 30_000);

test('detected as family v0.4; createFromTemplate is unsupported and creates nothing', async () => {
  const rel = await sessions.liveRelease();
  expect(rel.kind === 'ok' && rel.value.family).toBe('v0.4');
  const r = await sessions.createFromTemplate({ namespace: ns, template: 't', warmPool: 'p' }, '', 'op-46');
  expect(r).toMatchObject({ kind: 'unsupported', capability: `template/${ns}/t`, state: 'unsupported' });
  if (r.kind === 'unsupported') expect(r.reason).toBe('ReleaseProvisionsNoClaims');
  const claims = (await c.custom.listNamespacedCustomObject({
    group: 'extensions.agents.x-k8s.io',
    version: 'v1alpha1',
    namespace: ns,
    plural: 'sandboxclaims',
  })) as { items: unknown[] };
  expect(claims.items).toHaveLength(0);
});

test('observe, suspend (replicas 0, whose Ready=True is not trusted) and preconditioned terminate through v1alpha1', async () => {
  const created = (await c.custom.createNamespacedCustomObject({
    ...SBX,
    namespace: ns,
    body: {
      apiVersion: 'agents.x-k8s.io/v1alpha1',
      kind: 'Sandbox',
      metadata: { name: 'old' },
      spec: { podTemplate: { spec: { containers: [{ name: 'main', image: 'registry.k8s.io/pause:3.10' }] } } },
    },
  })) as { metadata: { uid: string } };
  const ref: SessionRef = { namespace: ns, name: 'old', via: 'sandbox', operationId: '', uid: created.metadata.uid };
  const ready = await waitFor(
    'Ready',
    60_000,
    async () => {
      const o = await sessions.observe(ref);
      return o.kind === 'ok' && o.value.phase === 'Ready' ? o.value : undefined;
    },
    250,
  );
  expect(ready.podIPs[0]).toMatch(/^127\.12\./);

  expect((await sessions.setSuspended(ns, 'old', true)).kind).toBe('ok');
  const suspended = await waitFor(
    'Suspended',
    30_000,
    async () => {
      const o = await sessions.observe(ref);
      return o.kind === 'ok' && o.value.phase === 'Suspended' ? o.value : undefined;
    },
    250,
  );
  expect(suspended.reason).toBe('Suspended');

  const stale = await sessions.terminate(ref, ready.resourceVersion);
  expect(stale.kind).toBe('rejected');
  const now = await sessions.observe(ref);
  expect(now.kind).toBe('ok');
  if (now.kind !== 'ok') return;
  expect(await sessions.terminate(ref, now.value.resourceVersion)).toEqual({
    kind: 'ok',
    value: { ref, outcome: 'deleted' },
  });
  expect(await sessions.terminate(ref, '')).toEqual({ kind: 'ok', value: { ref, outcome: 'already-gone' } });
}, 120_000);

test('a v1alpha1 claim (sandboxTemplateRef, no pool) is observed through its bound Sandbox and terminated', async () => {
  const EXT = { group: 'extensions.agents.x-k8s.io', version: 'v1alpha1' };
  await c.custom.createNamespacedCustomObject({
    ...EXT,
    namespace: ns,
    plural: 'sandboxtemplates',
    body: {
      apiVersion: 'extensions.agents.x-k8s.io/v1alpha1',
      kind: 'SandboxTemplate',
      metadata: { name: 'tpl' },
      spec: { podTemplate: { spec: { containers: [{ name: 'main', image: 'registry.k8s.io/pause:3.10' }] } } },
    },
  });
  const claim = (await c.custom.createNamespacedCustomObject({
    ...EXT,
    namespace: ns,
    plural: 'sandboxclaims',
    body: {
      apiVersion: 'extensions.agents.x-k8s.io/v1alpha1',
      kind: 'SandboxClaim',
      metadata: { name: 'cold' },
      spec: { sandboxTemplateRef: { name: 'tpl' }, warmpool: 'none' },
    },
  })) as { metadata: { uid: string } };
  const ref: SessionRef = { namespace: ns, name: 'cold', via: 'claim', operationId: '', uid: claim.metadata.uid };
  const ready = await waitFor(
    'claim Ready',
    60_000,
    async () => {
      const o = await sessions.observe(ref);
      return o.kind === 'ok' && o.value.phase === 'Ready' ? o.value : undefined;
    },
    250,
  );
  expect(ready.sandboxName).toBe('cold');
  expect(ready.reason).toBe('Ready');
  // prose: the message carries the controller's condition reason (upstream DependenciesReady) for the bound Sandbox
  expect(ready.message).toMatch(/^bound Sandbox cold: Ready=True\/DependenciesReady/);
  const rv = (
    (await c.custom.getNamespacedCustomObject({ ...EXT, namespace: ns, plural: 'sandboxclaims', name: 'cold' })) as {
      metadata: { resourceVersion: string };
    }
  ).metadata.resourceVersion;
  expect(await sessions.terminate(ref, rv)).toEqual({ kind: 'ok', value: { ref, outcome: 'deleted' } });
}, 90_000);
