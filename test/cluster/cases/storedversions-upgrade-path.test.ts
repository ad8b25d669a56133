/**
 * Case storedversions-upgrade-path, live part, on a v0.5.6 test cluster of its own (own run dir and pod net: it
 * rewrites the cluster-scoped Sandbox CRD's status, which other tests read). The history of an install that came
 * from v0.4.x is written through the API server's /status subresource (`status.storedVersions: [v1alpha1, v1beta1]`
 * on sandboxes.agents.x-k8s.io); three Sandboxes are created as v1alpha1 (converted by the real webhook) and two
 * claims are adopted from a real warm pool by the real controller. Then `agentplane plan-upgrade --kubeconfig`:
 * - `--to v0.5.0` is a downgrade blocked by warm-claims-cold-restart (agent-sandbox#1124) naming both claims, exit 11;
 *   `--accept warm-claims-cold-restart` lifts only that block;
 * - `--to v0.5.6` needs a storage migration and a prune of the Sandbox CRD's storedVersions, exit 10;
 * - a fixture release serving only v1beta1 (built here from v0.5.6's pinned CRDs minus v1alpha1: no such release is
 *   pinned) is blocked with the path migrate -> prune -> install, and no longer blocked once storedVersions is pruned.
 */
import * as k8s from '@kubernetes/client-node';
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import path from 'node:path';
import { KubeClient } from '../../../src/adapter/kubernetes/client.js';
import { readUpgradeState } from '../../../src/adapter/kubernetes/upgrade-state.js';
import { loadRelease, planUpgrade, releaseFacts } from '../../../src/releases/index.js';
import { betaOnlyRelease } from '../../cases/beta-only-release.js';
import { connect, freshNamespace, secondClusterEnv, waitFor, type Cluster } from '../helpers.js';
import { EXT, sandboxdTemplate } from '../verify/verifier-env.js';

const ROOT = path.resolve(import.meta.dirname, '../../..');
const runDir = path.join(ROOT, 'test-cluster', `.run-case07-${process.pid}`);
// kwok-only: storedVersions and conversion are API-server matters; a real node would only add start-up time.
// Release v0.5.6 named, not inherited: under scripts/gen-compat-matrix.ts the parent's release may be another one.
const env = secondClusterEnv(runDir, { release: 'v0.5.6', podNet: 48 });
const SANDBOX_CRD = 'sandboxes.agents.x-k8s.io';
let c: Cluster;
let ext: k8s.ApiextensionsV1Api;
let ns: string;
const warm: string[] = [];

async function writeStoredVersions(storedVersions: string[]): Promise<string[] | undefined> {
  await ext.patchCustomResourceDefinitionStatus(
    { name: SANDBOX_CRD, body: { status: { storedVersions } } },
    k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch),
  );
  return (await ext.readCustomResourceDefinitionStatus({ name: SANDBOX_CRD })).status?.storedVersions;
}

beforeAll(async () => {
  const up = spawnSync('bash', ['test-cluster/scripts/up.sh', '--release', 'v0.5.6'], {
    cwd: ROOT,
    env,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  if (up.status !== 0)
    throw new Error(`starting the case-07 cluster failed (exit ${up.status}); logs in ${runDir}/logs`);
  c = connect(runDir);
  ext = c.kc.makeApiClient(k8s.ApiextensionsV1Api);
  ns = await freshNamespace(c, 'case07');
  expect(await writeStoredVersions(['v1alpha1', 'v1beta1'])).toEqual(['v1alpha1', 'v1beta1']);
  for (const name of ['s1', 's2', 's3']) {
    await c.custom.createNamespacedCustomObject({
      group: 'agents.x-k8s.io',
      version: 'v1alpha1',
      namespace: ns,
      plural: 'sandboxes',
      body: {
        apiVersion: 'agents.x-k8s.io/v1alpha1',
        kind: 'Sandbox',
        metadata: { name, namespace: ns },
        spec: {
          replicas: 0,
          podTemplate: { spec: { containers: [{ name: 'main', image: 'registry.k8s.io/pause:3.10' }] } },
        },
      },
    });
  }
  await c.custom.createNamespacedCustomObject({
    ...EXT,
    namespace: ns,
    plural: 'sandboxtemplates',
    body: sandboxdTemplate(ns, 'py', 'sandboxd'),
  });
  await c.custom.createNamespacedCustomObject({
    ...EXT,
    namespace: ns,
    plural: 'sandboxwarmpools',
    body: {
      apiVersion: 'extensions.agents.x-k8s.io/v1beta1',
      kind: 'SandboxWarmPool',
      metadata: { name: 'py-pool', namespace: ns },
      spec: { replicas: 2, sandboxTemplateRef: { name: 'py' } },
    },
  });
  await waitFor('pool readyReplicas 2', 60_000, async () => {
    const p = (await c.custom.getNamespacedCustomObject({
      ...EXT,
      namespace: ns,
      plural: 'sandboxwarmpools',
      name: 'py-pool',
    })) as { status?: { readyReplicas?: number } };
    return (p.status?.readyReplicas ?? 0) >= 2 ? true : undefined;
  });
  for (const name of ['a', 'b']) {
    await c.custom.createNamespacedCustomObject({
      ...EXT,
      namespace: ns,
      plural: 'sandboxclaims',
      body: {
        apiVersion: 'extensions.agents.x-k8s.io/v1beta1',
        kind: 'SandboxClaim',
        metadata: { name, namespace: ns },
        spec: { warmPoolRef: { name: 'py-pool' } },
      },
    });
    // adopted: bound to a pool member, whose name is not the claim's
    const bound = await waitFor(`claim ${name} bound to a pool member`, 60_000, async () => {
      const claim = (await c.custom.getNamespacedCustomObject({
        ...EXT,
        namespace: ns,
        plural: 'sandboxclaims',
        name,
      })) as { status?: { sandbox?: { name?: string } } };
      const sandbox = claim.status?.sandbox?.name;
      return sandbox !== undefined && sandbox !== '' ? sandbox : undefined;
    });
    expect(bound).toMatch(/^py-pool-/);
    warm.push(`${ns}/${name}`);
  }
}, 300_000);

afterAll(() => {
  if (existsSync(runDir))
    spawnSync('bash', ['test-cluster/scripts/down.sh'], { cwd: ROOT, env, stdio: ['ignore', 'inherit', 'inherit'] });
}, 30_000);

interface JsonPlan {
  verdict: string;
  direction: string;
  exitCode: number;
  accepted: string[];
  unknowns: string[];
  findings: Array<{
    severity: string;
    topic: string;
    reason: string;
    source?: string;
    subject?: { defect?: string; claims?: string[]; kind?: string; storedVersions?: string[]; served?: string[] };
  }>;
  path: string[];
}

function plan(...args: string[]): { status: number | null; plan: JsonPlan; stderr: string } {
  const r = spawnSync(
    process.execPath,
    [
      path.join(ROOT, 'bin/agentplane.js'),
      'plan-upgrade',
      '--from',
      'v0.5.6',
      '--kubeconfig',
      c.info.kubeconfig,
      '-o',
      'json',
      ...args,
    ],
    { cwd: ROOT, encoding: 'utf8', timeout: 120_000 },
  );
  return { status: r.status, plan: JSON.parse(r.stdout) as JsonPlan, stderr: r.stderr };
}

test('--to v0.5.0 with two warm-started claims live: a downgrade blocked by warm-claims-cold-restart, exit 11; --accept lifts that block only', () => {
  const r = plan('--to', 'v0.5.0');
  expect(r.stderr).toBe('');
  expect(r.status).toBe(11);
  expect(r.plan).toMatchObject({
    verdict: 'blocked',
    direction: 'downgrade',
    exitCode: 11,
    unknowns: [],
    accepted: [],
  });
  const block = r.plan.findings.filter((f) => f.severity === 'block');
  expect(block.map((f) => [f.topic, f.source])).toEqual([['defect', 'kubernetes-sigs/agent-sandbox#1124']]);
  expect(block[0]!.subject).toMatchObject({ defect: 'warm-claims-cold-restart', claims: warm });
  expect(r.plan.path).toContain(
    'move to v0.5.6 instead of v0.5.0 (warm-claims-cold-restart is fixed in v0.5.2+), or accept the cold restarts with --accept warm-claims-cold-restart',
  );

  const accepted = plan('--to', 'v0.5.0', '--accept', 'warm-claims-cold-restart');
  expect(accepted.status).toBe(10);
  expect(accepted.plan).toMatchObject({ verdict: 'needs-migration', accepted: ['warm-claims-cold-restart'] });
  expect(accepted.plan.findings.filter((f) => f.severity === 'block')).toEqual([]);
}, 120_000);

test('--to v0.5.6: storedVersions [v1alpha1, v1beta1] read live need a storage migration and a prune, exit 10', () => {
  const r = plan('--to', 'v0.5.6');
  expect(r.status).toBe(10);
  expect(r.plan.verdict).toBe('needs-migration');
  expect(r.plan.findings.filter((f) => f.reason === 'StoredVersionsStale').map((f) => f.subject)).toEqual([
    expect.objectContaining({ kind: 'Sandbox', storedVersions: ['v1alpha1', 'v1beta1'], served: ['v1beta1'] }),
  ]);
  expect(r.plan.path).toEqual([
    'install v0.5.6',
    'migrate storage: rewrite every Sandbox object (a no-op update) so it is stored as v1beta1',
    'prune status.storedVersions of the Sandbox CRD(s) to [v1beta1]',
  ]);
}, 120_000);

test('a target serving only v1beta1 (fixture) is blocked while v1alpha1 is stored, with the path migrate -> prune -> install; after the prune it is not', async () => {
  const r056 = await loadRelease('v0.5.6');
  const target = betaOnlyRelease(r056);
  const client = KubeClient.connect({ kubeconfig: c.info.kubeconfig });
  const before = planUpgrade(r056, target, (await readUpgradeState(client, target.facts)).state, [
    { facts: releaseFacts('v0.5.0') },
  ]);
  expect(before.verdict).toBe('blocked');
  expect(before.findings.filter((f) => f.severity === 'block').map((f) => [f.reason, f.subject])).toEqual([
    [
      'StoredVersionNotServed',
      expect.objectContaining({ kind: 'Sandbox', storedVersions: ['v1alpha1'], served: ['v1beta1'] }),
    ],
  ]);
  expect(before.path).toEqual([
    'migrate storage at v0.5.6: rewrite every Sandbox object so it is stored as v1beta1 (agentplane migrate-storage --kubeconfig FILE shows what it would rewrite; add --apply to write)',
    'prune status.storedVersions of the Sandbox CRD(s) to [v1beta1] (migrate-storage --apply does it once every object of a kind is rewritten and a re-list confirms the count)',
    'install v0.6.0',
  ]);

  // what the path says: v0.5.6 already stores v1beta1, so every object is rewritten as v1beta1 on its next write; prune
  for (const name of ['s1', 's2', 's3']) {
    await c.custom.patchNamespacedCustomObject(
      {
        group: 'agents.x-k8s.io',
        version: 'v1beta1',
        namespace: ns,
        plural: 'sandboxes',
        name,
        body: { metadata: { annotations: { 'agentplane.io/storage-migrated': 'true' } } },
      },
      k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch),
    );
  }
  expect(await writeStoredVersions(['v1beta1'])).toEqual(['v1beta1']);
  const after = planUpgrade(r056, target, (await readUpgradeState(client, target.facts)).state, [
    { facts: releaseFacts('v0.5.0') },
  ]);
  expect(after.findings.filter((f) => f.severity === 'block')).toEqual([]);
  expect(after.findings.some((f) => f.reason === 'StoredVersionsStale' && f.subject?.kind === 'Sandbox')).toBe(false);
}, 120_000);
