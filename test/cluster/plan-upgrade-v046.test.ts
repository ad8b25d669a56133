/**
 * `agentplane plan-upgrade --kubeconfig` on a real v0.4.6 cluster (own run dir and pod net, started and stopped here):
 * the release comes from the live install's label, storedVersions are read live, and v1alpha1 claims are checked
 * against the pool their conversion to v1beta1 names (`extensions/api/v1alpha1/sandboxclaim_conversion.go@v0.5.6`):
 * a claim with `warmpool: none` converts to `shadow-pool-<template>`, which does not exist; one naming a pool that
 * exists is fine. A move to v1.0.3 is blocked (v1alpha1 is stored, v1.0.3 serves only v1beta1) and goes by way of v0.5.6.
 */
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { connect, freshNamespace, secondClusterEnv, type Cluster } from './helpers.js';

const ROOT = path.resolve(import.meta.dirname, '../..');
const runDir = path.join(ROOT, 'test-cluster', `.run-plan-v0.4.6-${process.pid}`);
// kwok nodes only: this v0.4.6 cluster needs no real node. Its own release and pod net, never the parent's.
const env = secondClusterEnv(runDir, { release: 'v0.4.6', podNet: 47 });
const EXT = { group: 'extensions.agents.x-k8s.io', version: 'v1alpha1' };
let c: Cluster;
let ns: string;

beforeAll(async () => {
  const up = spawnSync('bash', ['test-cluster/scripts/up.sh', '--release', 'v0.4.6'], {
    cwd: ROOT,
    env,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  if (up.status !== 0)
    throw new Error(`starting the v0.4.6 cluster failed (exit ${up.status}); logs in ${runDir}/logs`);
  c = connect(runDir);
  ns = await freshNamespace(c, 'plan46');
  const meta = (name: string): Record<string, unknown> => ({ name, namespace: ns });
  await c.custom.createNamespacedCustomObject({
    ...EXT,
    namespace: ns,
    plural: 'sandboxtemplates',
    body: {
      apiVersion: 'extensions.agents.x-k8s.io/v1alpha1',
      kind: 'SandboxTemplate',
      metadata: meta('python'),
      spec: { podTemplate: { spec: { containers: [{ name: 'main', image: 'registry.k8s.io/pause:3.10' }] } } },
    },
  });
  await c.custom.createNamespacedCustomObject({
    ...EXT,
    namespace: ns,
    plural: 'sandboxwarmpools',
    body: {
      apiVersion: 'extensions.agents.x-k8s.io/v1alpha1',
      kind: 'SandboxWarmPool',
      metadata: meta('fast'),
      spec: { replicas: 0, sandboxTemplateRef: { name: 'python' } },
    },
  });
  for (const [name, warmpool] of [
    ['cold', 'none'],
    ['named', 'fast'],
  ] as const) {
    await c.custom.createNamespacedCustomObject({
      ...EXT,
      namespace: ns,
      plural: 'sandboxclaims',
      body: {
        apiVersion: 'extensions.agents.x-k8s.io/v1alpha1',
        kind: 'SandboxClaim',
        metadata: meta(name),
        spec: { sandboxTemplateRef: { name: 'python' }, warmpool },
      },
    });
  }
}, 180_000);

afterAll(() => {
  if (existsSync(runDir))
    spawnSync('bash', ['test-cluster/scripts/down.sh'], { cwd: ROOT, env, stdio: ['ignore', 'inherit', 'inherit'] });
}, 30_000);

test('v0.4.6 -> v0.5.6 from the live cluster: needs-migration, and only the cold claim lacks the pool it converts to', () => {
  const r = spawnSync(
    process.execPath,
    [
      path.join(ROOT, 'bin/agentplane.js'),
      'plan-upgrade',
      '--to',
      'v0.5.6',
      '--kubeconfig',
      c.info.kubeconfig,
      '-o',
      'json',
    ],
    { cwd: ROOT, encoding: 'utf8', timeout: 120_000 },
  );
  expect(r.stderr).toBe('');
  expect(r.status).toBe(10);
  const plan = JSON.parse(r.stdout) as {
    from: string;
    verdict: string;
    storedVersionsSource: string;
    findings: Array<{ topic: string; reason: string; claim?: { namespace: string; name: string; pool: string } }>;
    path: string[];
  };
  expect(plan.from).toBe('v0.4.6');
  expect(plan.verdict).toBe('needs-migration');
  expect(plan.storedVersionsSource).toMatch(/^live \(context /);
  expect(plan.findings.filter((f) => f.reason === 'ClaimPoolMissing').map((f) => f.claim)).toEqual([
    { namespace: ns, name: 'cold', pool: 'shadow-pool-python' },
  ]);
  expect(plan.path).toContain(
    `before upgrading: claim ${ns}/cold converts to warmPoolRef shadow-pool-python, which does not exist; create that pool or re-create the claim`,
  );
}, 120_000);

test('v0.4.6 -> v1.0.3 from the live cluster: blocked (v1alpha1 is stored), only by way of v0.5.6', () => {
  const r = spawnSync(
    process.execPath,
    [
      path.join(ROOT, 'bin/agentplane.js'),
      'plan-upgrade',
      '--to',
      'v1.0.3',
      '--kubeconfig',
      c.info.kubeconfig,
      '-o',
      'json',
    ],
    { cwd: ROOT, encoding: 'utf8', timeout: 120_000 },
  );
  expect(r.stderr).toBe('');
  expect(r.status).toBe(11);
  const plan = JSON.parse(r.stdout) as {
    verdict: string;
    findings: Array<{ reason: string; subject?: { kind?: string; storedVersions?: string[] } }>;
    path: string[];
  };
  expect(plan.verdict).toBe('blocked');
  expect(
    plan.findings.filter((f) => f.reason === 'StoredVersionNotServed').map((f) => f.subject?.storedVersions),
  ).toEqual([['v1alpha1'], ['v1alpha1'], ['v1alpha1'], ['v1alpha1']]);
  expect(plan.findings.map((f) => f.reason)).toEqual(
    expect.arrayContaining(['IntermediateRelease', 'ConversionWebhookRemoved', 'OrphanedWebhookObjects']),
  );
  expect(plan.path.filter((p) => p.startsWith('install '))).toEqual([
    expect.stringMatching(/^install the intermediate release v0\.5\.6 /),
    'install v1.0.3',
  ]);
}, 120_000);
