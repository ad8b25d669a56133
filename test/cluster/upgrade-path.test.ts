/**
 * The whole upgrade path on one running test cluster (own run dir and pod net 57, kwok nodes only, started and stopped
 * here): Agent Sandbox v0.4.6 installed through AgentPlane with live sessions (a bare Sandbox, a warm pool with members,
 * a claim adopted from it and a cold claim), moved to v0.5.6 and then to v1.0.3 by following `agentplane plan-upgrade`
 * and `agentplane migrate-storage`, the releases swapped in place by test-cluster/scripts/upgrade.sh (new CRDs first,
 * then the controller, router and runtime stand-in of the new release).
 *
 * - v0.4.6: `plan-upgrade --to v1.0.3` is blocked and names v0.5.6 as the intermediate release, as the API server would
 *   refuse the v1.0.3 CRDs (upgrade.sh proves it: 422, nothing changed); `--to v0.5.6` needs a migration and names the
 *   pool the cold claim converts to (`extensions/api/v1alpha1/sandboxclaim_conversion.go@v0.5.6`), created here.
 * - v0.5.6: every object readable at v1beta1, the same objects (uids), every session observed through the adapter and
 *   terminable (a preconditioned delete with a stale version is rejected and deletes nothing); `--to v1.0.3` is blocked
 *   while v1alpha1 is in storedVersions (`docs/api-migration-guide.md@v1.0.3`; the API server refuses too); migrate-storage's dry-run changes
 *   nothing, `--apply` prunes to [v1beta1] with the same objects; then plan-upgrade no longer blocks on storage and its
 *   path is followed: the conversion stanza merge-patched away, the v1.0.3 CRDs before the controller, the orphans of the
 *   v0.5 install deleted (`docs/api-migration-guide.md@v1.0.3`).
 * - v1.0.3: CRDs serve and store v1beta1 only, the same objects, every session observed then terminated and gone
 *   (its Sandbox and Pod too), a v1alpha1 request is a 404; the official client k8s-agent-sandbox 1.0.8 runs
 *   `echo hello` through the v1.0.3 router.
 *
 * Two steps this test found that plan-upgrade's path does not name yet, taken here explicitly: ownerReferences that
 * name v1alpha1 owners are rewritten to v1beta1 at v0.5.6, and kube-controller-manager is restarted after v1alpha1 is
 * gone (kubernetes/kubernetes#102641): without either, the garbage collector never deletes what a terminated session
 * owned (its Sandbox, its Pod).
 */
import * as k8s from '@kubernetes/client-node';
import { App } from 'cdk8s';
import { k8s as k8sPlus } from 'cdk8s-plus-28';
import { execFile, execFileSync, spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import path from 'node:path';
import { KubeClient } from '../../src/adapter/kubernetes/client.js';
import { KubeSessions } from '../../src/adapter/kubernetes/sessions.js';
import type { SessionRef } from '../../src/adapter/types.js';
import { MIGRATE_EXIT_CODES } from '../../src/cli/commands/migrate-storage-exit-codes.js';
import { PLAN_EXIT_CODES } from '../../src/cli/commands/plan-upgrade-exit-codes.js';
import { AgentEnvironment } from '../../src/constructs/index.js';
import { CONVERSION_NONE_PATCH, WEBHOOK_ORPHANS } from '../../src/releases/conversion-removal.js';
import { loadRelease } from '../../src/releases/index.js';
import { synthesizeEnvironment } from '../../src/synth/index.js';
import { serverSideApply, type KubeObject } from '../../test-cluster/kube.js';
import { readRuntimes, RUNTIME_ANNOTATION } from '../../test-cluster/runtime.js';
import { connect, freshNamespace, isGone, waitFor, type Cluster } from './helpers.js';

const ROOT = path.resolve(import.meta.dirname, '../..');
const runDir = path.join(ROOT, 'test-cluster', `.run-upgrade-path-${process.pid}`);
// kwok nodes only; release and pod net are this file's own (no other test uses pod net 57): an inherited
// AGENTPLANE_TEST_CLUSTER_RELEASE or _POD_NET must not leak in.
const {
  AGENTPLANE_TEST_CLUSTER_POD_NET: _podNet,
  AGENTPLANE_TEST_CLUSTER_RELEASE: _release,
  ...inherited
} = process.env;
const env = {
  ...inherited,
  AGENTPLANE_TEST_CLUSTER_RUN: runDir,
  AGENTPLANE_TEST_CLUSTER_POD_NET: '57',
  AGENTPLANE_TEST_CLUSTER_REAL_NODE: '0',
};
const CRDS = {
  Sandbox: { crd: 'sandboxes.agents.x-k8s.io', group: 'agents.x-k8s.io', plural: 'sandboxes' },
  SandboxClaim: {
    crd: 'sandboxclaims.extensions.agents.x-k8s.io',
    group: 'extensions.agents.x-k8s.io',
    plural: 'sandboxclaims',
  },
  SandboxTemplate: {
    crd: 'sandboxtemplates.extensions.agents.x-k8s.io',
    group: 'extensions.agents.x-k8s.io',
    plural: 'sandboxtemplates',
  },
  SandboxWarmPool: {
    crd: 'sandboxwarmpools.extensions.agents.x-k8s.io',
    group: 'extensions.agents.x-k8s.io',
    plural: 'sandboxwarmpools',
  },
} as const;
type Kind = keyof typeof CRDS;
const KINDS = Object.keys(CRDS) as Kind[];
const POD = { spec: { containers: [{ name: 'main', image: 'registry.k8s.io/pause:3.10' }] } };

interface Item {
  metadata: { namespace?: string; name: string; uid: string; resourceVersion: string };
  status?: { sandbox?: { name?: string }; readyReplicas?: number };
  spec?: { replicas?: number };
}
interface Plan {
  from: string;
  to: string;
  verdict: string;
  findings: Array<{ reason: string; message: string; claim?: { namespace: string; name: string; pool: string } }>;
  path: string[];
}

let c: Cluster;
let ext: k8s.ApiextensionsV1Api;
let ns: string;
/** Every session made on v0.4.6, as the adapter refers to it. */
let sessions: SessionRef[] = [];
/** `namespace/name uid` of every Agent Sandbox object, per kind, right before the first move. */
let baseline: Record<Kind, string[]>;

const cli = (...args: string[]) => {
  const r = spawnSync(process.execPath, [path.join(ROOT, 'bin/agentplane.js'), ...args], {
    cwd: ROOT,
    encoding: 'utf8',
    timeout: 240_000,
  });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
};
const plan = (to: string): { status: number | null; plan: Plan } => {
  const r = cli('plan-upgrade', '--to', to, '--kubeconfig', c.info.kubeconfig, '-o', 'json');
  return { status: r.status, plan: JSON.parse(r.stdout) as Plan };
};
const upgrade = (release: string, ...flags: string[]) =>
  spawnSync('bash', ['test-cluster/scripts/upgrade.sh', '--release', release, ...flags], {
    cwd: ROOT,
    env,
    encoding: 'utf8',
    timeout: 300_000,
  });
const list = async (kind: Kind, version: string): Promise<Item[]> =>
  (
    (await c.custom.listCustomObjectForAllNamespaces({
      group: CRDS[kind].group,
      version,
      plural: CRDS[kind].plural,
    })) as { items: Item[] }
  ).items;
const ids = (items: Item[]) => items.map((o) => `${o.metadata.namespace}/${o.metadata.name} ${o.metadata.uid}`).sort();
const snapshot = async (version: string): Promise<Record<Kind, string[]>> =>
  Object.fromEntries(await Promise.all(KINDS.map(async (k) => [k, ids(await list(k, version))]))) as Record<
    Kind,
    string[]
  >;
/**
 * Nothing of `baseline` lost or replaced (same names, same uids); the only objects allowed beside them are new members
 * of the warm pool `fast`, which a newly started controller may add while it takes the pool over (seen once in CI:
 * one extra member between two reads right after the upgrade). A new member is no session, so none is lost.
 */
async function expectKept(version: string): Promise<void> {
  const now = await snapshot(version);
  for (const k of KINDS) {
    expect(now[k]).toEqual(expect.arrayContaining(baseline[k]));
    const extra = now[k].filter((x) => !baseline[k].includes(x));
    expect(extra.filter((x) => !(k === 'Sandbox' && x.startsWith(`${ns}/fast-`)))).toEqual([]);
  }
}
const storedVersions = async (): Promise<string[][]> =>
  Promise.all(
    KINDS.map(
      async (k) => (await ext.readCustomResourceDefinition({ name: CRDS[k].crd })).status?.storedVersions ?? [],
    ),
  );
const create = (kind: Kind, body: Record<string, unknown>) =>
  c.custom.createNamespacedCustomObject({
    group: CRDS[kind].group,
    version: 'v1alpha1',
    namespace: ns,
    plural: CRDS[kind].plural,
    body: { apiVersion: `${CRDS[kind].group}/v1alpha1`, kind, ...body },
  }) as Promise<Item>;
const ALPHA_OWNERS = new Set(['agents.x-k8s.io/v1alpha1', 'extensions.agents.x-k8s.io/v1alpha1']);
interface Owned {
  kind: string;
  metadata: {
    namespace: string;
    name: string;
    ownerReferences?: Array<{ apiVersion: string; kind: string; name: string }>;
  };
}
/** Sandboxes and Pods in the test namespace whose ownerReferences name a v1alpha1 Agent Sandbox owner. */
const ownedThroughAlpha = async (): Promise<Owned[]> => {
  const sandboxes = (
    (await c.custom.listNamespacedCustomObject({
      group: CRDS.Sandbox.group,
      version: 'v1beta1',
      namespace: ns,
      plural: 'sandboxes',
    })) as {
      items: Owned[];
    }
  ).items;
  const pods = (await c.core.listNamespacedPod({ namespace: ns })).items.map((p) => ({
    ...(p as unknown as Owned),
    kind: 'Pod',
  }));
  return [...sandboxes, ...pods].filter((o) => o.metadata.ownerReferences?.some((r) => ALPHA_OWNERS.has(r.apiVersion)));
};
/** A fresh adapter, as a client starting after the move would have (the live release is detected once per instance). */
const adapter = () => new KubeSessions(KubeClient.connect({ kubeconfig: c.info.kubeconfig }));
/** Waits until every session observes Ready through `s`; returns the observations. */
const allReady = (s: KubeSessions, what: string) =>
  waitFor(
    `every session Ready (${what})`,
    60_000,
    async () => {
      const obs = await Promise.all(sessions.map((r) => s.observe(r)));
      return obs.every((o) => o.kind === 'ok' && o.value.phase === 'Ready')
        ? obs.map((o) => (o.kind === 'ok' ? o.value : undefined)!)
        : undefined;
    },
    500,
  );
/** Settled: the pool holds its replicas and both claims are bound. */
const settled = () =>
  waitFor(
    'the warm pool full and both claims bound',
    60_000,
    async () => {
      const pool = (await c.custom.getNamespacedCustomObject({
        group: CRDS.SandboxWarmPool.group,
        version: 'v1alpha1',
        namespace: ns,
        plural: CRDS.SandboxWarmPool.plural,
        name: 'fast',
      })) as Item;
      const claims = (await list('SandboxClaim', 'v1alpha1')).filter((o) => o.metadata.namespace === ns);
      return pool.status?.readyReplicas === 2 && claims.length === 2 && claims.every((o) => o.status?.sandbox?.name)
        ? claims
        : undefined;
    },
    500,
  );

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
  ext = c.kc.makeApiClient(k8s.ApiextensionsV1Api);
  ns = await freshNamespace(c, 'upgpath');
}, 240_000);

afterAll(() => {
  if (existsSync(runDir))
    spawnSync('bash', ['test-cluster/scripts/down.sh'], { cwd: ROOT, env, stdio: ['ignore', 'inherit', 'inherit'] });
}, 60_000);

test('v0.4.6: live sessions made as v1alpha1 objects; the direct jump to v1.0.3 is refused, the path goes through v0.5.6', async () => {
  await create('SandboxTemplate', { metadata: { name: 'python' }, spec: { podTemplate: POD } });
  await create('SandboxWarmPool', {
    metadata: { name: 'fast' },
    spec: { replicas: 2, sandboxTemplateRef: { name: 'python' } },
  });
  const bare = await create('Sandbox', { metadata: { name: 'bare' }, spec: { podTemplate: POD } });
  await waitFor(
    'pool members',
    60_000,
    async () =>
      (await list('Sandbox', 'v1alpha1')).filter((o) => o.metadata.name.startsWith('fast-')).length === 2
        ? true
        : undefined,
    250,
  );
  const warm = await create('SandboxClaim', {
    metadata: { name: 'warm' },
    spec: { sandboxTemplateRef: { name: 'python' }, warmpool: 'fast' },
  });
  const cold = await create('SandboxClaim', {
    metadata: { name: 'cold' },
    spec: { sandboxTemplateRef: { name: 'python' }, warmpool: 'none' },
  });
  const claims = await settled();
  const adopted = claims.find((o) => o.metadata.name === 'warm')!.status!.sandbox!.name!;
  expect(adopted).toMatch(/^fast-/); // the warm claim took a pool member
  const members = (await list('Sandbox', 'v1alpha1')).filter(
    (o) => o.metadata.namespace === ns && o.metadata.name.startsWith('fast-') && o.metadata.name !== adopted,
  );
  expect(members).toHaveLength(2); // the pool refilled
  const ref = (o: Item, via: SessionRef['via']): SessionRef => ({
    namespace: ns,
    name: o.metadata.name,
    via,
    operationId: '',
    uid: o.metadata.uid,
  });
  sessions = [ref(bare, 'sandbox'), ref(warm, 'claim'), ref(cold, 'claim'), ...members.map((m) => ref(m, 'sandbox'))];
  const s = adapter();
  const rel = await s.liveRelease();
  expect(rel.kind === 'ok' && rel.value.family).toBe('v0.4');
  await allReady(s, 'v0.4.6');

  // v0.4.6 -> v1.0.3 directly: blocked, through v0.5.6
  const direct = plan('v1.0.3');
  expect(direct.status).toBe(PLAN_EXIT_CODES.blocked);
  expect(direct.plan).toMatchObject({ from: 'v0.4.6', to: 'v1.0.3', verdict: 'blocked' });
  expect(direct.plan.findings.map((f) => f.reason)).toEqual(
    expect.arrayContaining(['IntermediateRelease', 'StoredVersionNotServed']),
  );
  expect(direct.plan.path.some((p) => p.startsWith('install the intermediate release v0.5.6'))).toBe(true);
  // ... as the API server would: the v1.0.3 CRDs are refused while v1alpha1 is stored, and nothing moves
  const refused = upgrade('v1.0.3');
  expect(refused.status).toBe(1);
  expect(refused.stderr).toMatch(
    /storedVersions.*v1alpha1.*missing from spec\.versions|must remain in spec\.versions/s,
  );
  expect(JSON.parse(spawnSync('cat', [path.join(runDir, 'cluster.json')], { encoding: 'utf8' }).stdout).release).toBe(
    'v0.4.6',
  );
  expect(await storedVersions()).toEqual(KINDS.map(() => ['v1alpha1']));

  // v0.4.6 -> v0.5.6: needs-migration; the cold claim converts to a pool that does not exist yet
  const to056 = plan('v0.5.6');
  expect(to056.status).toBe(PLAN_EXIT_CODES['needs-migration']);
  expect(to056.plan.findings.filter((f) => f.reason === 'ClaimPoolMissing').map((f) => f.claim)).toEqual([
    { namespace: ns, name: 'cold', pool: 'shadow-pool-python' },
  ]);
  // follow it: create that pool (empty: it only has to exist for the converted claim)
  await create('SandboxWarmPool', {
    metadata: { name: 'shadow-pool-python' },
    spec: { replicas: 0, sandboxTemplateRef: { name: 'python' } },
  });
  const again = plan('v0.5.6');
  expect(again.status).toBe(PLAN_EXIT_CODES['needs-migration']);
  expect(again.plan.findings.map((f) => f.reason)).not.toContain('ClaimPoolMissing');
  await settled();
  baseline = await snapshot('v1alpha1');
  expect(baseline.Sandbox.filter((x) => x.startsWith(`${ns}/`))).toHaveLength(5);
}, 300_000);

test('v0.4.6 -> v0.5.6 in place: the same objects at v1beta1, every session observed and terminable', async () => {
  const r = upgrade('v0.5.6');
  expect(r.status).toBe(0);
  expect(r.stdout.trim()).toBe(path.join(runDir, 'kubeconfig'));
  expect(connect(runDir).info.release).toBe('v0.5.6');
  const s = adapter();
  const rel = await s.liveRelease();
  expect(rel.kind === 'ok' && rel.value.family).toBe('v0.5');
  await expectKept('v1beta1');
  await expectKept('v1alpha1'); // still served, through the conversion webhook
  for (const k of KINDS)
    for (const o of (await list(k, 'v1beta1')).filter((x) => x.metadata.namespace === ns))
      await c.custom.getNamespacedCustomObject({
        group: CRDS[k].group,
        version: 'v1beta1',
        namespace: ns,
        plural: CRDS[k].plural,
        name: o.metadata.name,
      });
  const obs = await allReady(s, 'v0.5.6');
  // terminable: the adapter's preconditioned delete reaches each one (a stale version is refused, nothing deleted)
  for (const o of obs) expect((await s.terminate(o.ref, '1')).kind).toBe('rejected');
  await expectKept('v1beta1');
}, 300_000);

test('v0.5.6: blocked while v1alpha1 is stored; migrate-storage dry-run then --apply prunes it, nothing lost', async () => {
  expect(await storedVersions()).toEqual(KINDS.map(() => ['v1alpha1', 'v1beta1']));
  const blocked = plan('v1.0.3');
  expect(blocked.status).toBe(PLAN_EXIT_CODES.blocked);
  expect(blocked.plan.verdict).toBe('blocked');
  expect(blocked.plan.findings.filter((f) => f.reason === 'StoredVersionNotServed')).toHaveLength(4);

  const dry = cli('migrate-storage', '--kubeconfig', c.info.kubeconfig, '-o', 'json');
  expect(dry.status).toBe(MIGRATE_EXIT_CODES.ok);
  const dr = JSON.parse(dry.stdout) as {
    mode: string;
    kinds: Array<{ kind: string; listed: number; wouldPrune: boolean }>;
  };
  expect(dr.mode).toBe('dry-run');
  expect(dr.kinds.map((k) => [k.kind, k.listed, k.wouldPrune])).toEqual(
    KINDS.map((k) => [k, baseline[k].length, true]),
  );
  expect(await storedVersions()).toEqual(KINDS.map(() => ['v1alpha1', 'v1beta1']));
  await expectKept('v1beta1');

  const apply = cli('migrate-storage', '--apply', '--kubeconfig', c.info.kubeconfig, '-o', 'json');
  expect(apply.status).toBe(MIGRATE_EXIT_CODES.ok);
  const ar = JSON.parse(apply.stdout) as {
    kinds: Array<{ kind: string; outcome: string; relisted: number; confirmed: number }>;
  };
  expect(ar.kinds.map((k) => [k.kind, k.outcome, k.relisted, k.confirmed])).toEqual(
    KINDS.map((k) => [k, 'pruned', baseline[k].length, baseline[k].length]),
  );
  expect(await storedVersions()).toEqual(KINDS.map(() => ['v1beta1']));
  await expectKept('v1beta1');
}, 300_000);

// A step plan-upgrade's path does not name yet (found by this test): the v0.4.6 controller wrote ownerReferences naming
// v1alpha1 (pool -> member, claim -> Sandbox, Sandbox -> Pod); neither v0.5.6 nor the storage rewrite changes them, and
// on v1.0.3 the garbage collector cannot map a v1alpha1 owner, so it retries forever and never deletes the dependents
// (`pkg/controller/garbagecollector/garbagecollector.go@v1.36.3`, restMappingError): a terminated claim would leave its
// Sandbox and Pod running, a deleted Sandbox its Pod. Rewritten here to v1beta1 (the same owner: group, kind, name, uid).
test('v0.5.6: ownerReferences naming v1alpha1 are rewritten to v1beta1 before v1.0.3 (else nothing they own is ever collected)', async () => {
  const owned = await ownedThroughAlpha();
  expect(owned.map((o) => o.kind).sort()).toEqual([
    'Pod',
    'Pod',
    'Pod',
    'Pod',
    'Pod',
    'Sandbox',
    'Sandbox',
    'Sandbox',
    'Sandbox',
  ]);
  for (const o of owned) {
    const ops = o.metadata.ownerReferences!.flatMap((r, i) =>
      ALPHA_OWNERS.has(r.apiVersion)
        ? [
            { op: 'test', path: `/metadata/ownerReferences/${i}/apiVersion`, value: r.apiVersion },
            {
              op: 'replace',
              path: `/metadata/ownerReferences/${i}/apiVersion`,
              value: r.apiVersion.replace(/\/v1alpha1$/, '/v1beta1'),
            },
          ]
        : [],
    );
    const json = k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.JsonPatch);
    if (o.kind === 'Pod') await c.core.patchNamespacedPod({ name: o.metadata.name, namespace: ns, body: ops }, json);
    else
      await c.custom.patchNamespacedCustomObject(
        {
          group: CRDS.Sandbox.group,
          version: 'v1beta1',
          namespace: ns,
          plural: 'sandboxes',
          name: o.metadata.name,
          body: ops,
        },
        json,
      );
  }
  expect(await ownedThroughAlpha()).toEqual([]);
  await expectKept('v1beta1');
}, 120_000);

test('v0.5.6 -> v1.0.3 by the plan: conversion off, CRDs first, controller swapped, orphans gone; sessions observed, then terminated', async () => {
  const next = plan('v1.0.3');
  expect(next.status).toBe(PLAN_EXIT_CODES['needs-migration']);
  const reasons = next.plan.findings.map((f) => f.reason);
  expect(reasons).not.toContain('StoredVersionNotServed');
  expect(reasons).toEqual(
    expect.arrayContaining(['ConversionWebhookRemoved', 'CrdsBeforeController', 'OrphanedWebhookObjects']),
  );
  const step = (re: RegExp) => next.plan.path.findIndex((p) => re.test(p));
  const steps = [
    /merge-patch the conversion off/,
    /CRDs first/,
    /^install v1\.0\.3/,
    /^delete what v1\.0\.3 no longer ships/,
  ].map(step);
  expect(steps.every((i) => i >= 0)).toBe(true);
  const [patchStep, crdsStep, installStep, orphanStep] = steps as [number, number, number, number];
  expect(patchStep < crdsStep && crdsStep <= installStep && installStep < orphanStep).toBe(true);

  // 1. the conversion stanza, merge-patched away
  for (const k of KINDS)
    await ext.patchCustomResourceDefinition(
      { name: CRDS[k].crd, body: JSON.parse(CONVERSION_NONE_PATCH) as object },
      k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch),
    );
  // 2. + 3. the v1.0.3 CRDs, then its controller (upgrade.sh keeps that order)
  // (+ a kube-controller-manager restart: its garbage collector keeps the v1alpha1 identities it first saw and never
  // collects them once v1alpha1 is gone, kubernetes/kubernetes#102641; see upgrade.sh)
  const r = upgrade('v1.0.3', '--restart-controller-manager');
  expect(r.status).toBe(0);
  expect(r.stderr.indexOf('Agent Sandbox v1.0.3 install applied')).toBeLessThan(
    r.stderr.indexOf('agent-sandbox-controller (v0.5.6) stopped'),
  );
  expect(connect(runDir).info.release).toBe('v1.0.3');
  // 4. what v1.0.3 no longer ships, where the cluster has it (install.ts applies no Service; the Secret is external here)
  const rbac = c.kc.makeApiClient(k8s.RbacAuthorizationV1Api);
  const deleted: string[] = [];
  for (const o of WEBHOOK_ORPHANS) {
    const del = {
      Service: () => c.core.deleteNamespacedService({ name: o.name, namespace: o.namespace }),
      Secret: () => c.core.deleteNamespacedSecret({ name: o.name, namespace: o.namespace }),
      Role: () => rbac.deleteNamespacedRole({ name: o.name, namespace: o.namespace }),
      RoleBinding: () => rbac.deleteNamespacedRoleBinding({ name: o.name, namespace: o.namespace }),
    }[o.kind]!;
    try {
      await del();
      deleted.push(`${o.kind}/${o.name}`);
    } catch (err) {
      if (!(err instanceof k8s.ApiException && err.code === 404)) throw err;
    }
  }
  expect(deleted).toEqual(
    expect.arrayContaining(['Role/agent-sandbox-controller', 'RoleBinding/agent-sandbox-controller']),
  );

  // on v1.0.3: v1beta1 alone, the same objects, each readable; v1alpha1 is a 404
  for (const k of KINDS) {
    const crd = await ext.readCustomResourceDefinition({ name: CRDS[k].crd });
    expect([crd.spec.versions.map((v) => v.name), crd.status?.storedVersions, crd.spec.conversion?.strategy]).toEqual([
      ['v1beta1'],
      ['v1beta1'],
      'None',
    ]);
  }
  await expectKept('v1beta1');
  for (const k of KINDS)
    for (const o of (await list(k, 'v1beta1')).filter((x) => x.metadata.namespace === ns))
      await c.custom.getNamespacedCustomObject({
        group: CRDS[k].group,
        version: 'v1beta1',
        namespace: ns,
        plural: CRDS[k].plural,
        name: o.metadata.name,
      });
  for (const k of KINDS)
    expect(
      await isGone(() =>
        c.custom.listNamespacedCustomObject({
          group: CRDS[k].group,
          version: 'v1alpha1',
          namespace: ns,
          plural: CRDS[k].plural,
        }),
      ),
    ).toBe(true);

  const s = adapter();
  const rel = await s.liveRelease();
  expect(rel.kind === 'ok' && rel.value.family).toBe('v1.0');
  const obs = await allReady(s, 'v1.0.3');
  await expectKept('v1beta1'); // the new controller replaced nothing
  // terminated through the adapter, then gone
  for (const o of obs)
    expect(await s.terminate(o.ref, o.resourceVersion)).toEqual({
      kind: 'ok',
      value: { ref: o.ref, outcome: 'deleted' },
    });
  for (const o of obs) {
    const after = await waitFor(
      `${o.ref.name} gone`,
      60_000,
      async () => {
        const x = await s.observe(o.ref);
        return x.kind === 'ok' && x.value.phase === 'Gone' ? x.value : undefined;
      },
      250,
    );
    expect(after.phase).toBe('Gone');
  }
  // ... and what they owned: every Sandbox (a claim's through the garbage collector) and every Pod
  const sandboxesGone = new Set(obs.flatMap((o) => [o.ref.name, ...(o.sandboxName ? [o.sandboxName] : [])]));
  const podsGone = new Set(obs.map((o) => o.podName ?? o.sandboxName ?? o.ref.name));
  expect(sandboxesGone.size).toBe(sessions.length + 1); // + the member the warm claim adopted
  let left: string[] = [];
  await waitFor(
    'every session, its Sandbox and its Pod deleted',
    90_000,
    async () => {
      left = [
        ...(await list('Sandbox', 'v1beta1'))
          .filter((o) => o.metadata.namespace === ns && sandboxesGone.has(o.metadata.name))
          .map((o) => `Sandbox/${o.metadata.name}`),
        ...(await c.core.listNamespacedPod({ namespace: ns })).items
          .filter((p) => podsGone.has(p.metadata!.name!))
          .map((p) => `Pod/${p.metadata!.name!}`),
      ];
      return left.length === 0 ? true : undefined;
    },
    250,
  ).catch((err: Error) => {
    throw new Error(`${err.message}; left: ${left.join(', ')}`);
  });
}, 300_000);

test('v1.0.3: the official client k8s-agent-sandbox 1.0.8 runs `echo hello` through the v1.0.3 router', async () => {
  const venvRoot = path.join(homedir(), '.cache', 'agentplane', 'client-venv');
  if (!existsSync(venvRoot)) {
    // Not set up on this machine: test/client/setup-venv.sh builds it (it downloads the pinned wheels).
    console.warn(`skipped: no client venv in ${venvRoot} (run bash test/client/setup-venv.sh)`);
    return;
  }
  const venv = execFileSync('bash', ['test/client/setup-venv.sh'], { cwd: ROOT, encoding: 'utf8' })
    .trim()
    .split('\n')
    .pop()!;
  const pyNs = await freshNamespace(c, 'upgpath-client');
  const environment = new AgentEnvironment(new App(), 'upgrade-path-client', {
    release: await loadRelease('v1.0.3'),
    install: false,
    defaultNamespace: pyNs,
    createNamespaces: false,
  });
  const rc = environment.addRuntimeClass('standin', {
    preset: 'gvisor',
    name: 'standin',
    handler: 'standin',
    scheduling: { nodeSelector: { 'agentplane.io/runtime': 'standin' } },
  });
  const q = { cpu: k8sPlus.Quantity.fromString('500m'), memory: k8sPlus.Quantity.fromString('512Mi') };
  const template = environment.addTemplate('python', {
    name: 'python',
    runtimeClass: rc,
    podSpec: {
      containers: [
        {
          name: 'python-runtime',
          image: 'registry.local/agentplane-test/python-runtime-sandbox:v1.0.3',
          ports: [{ containerPort: 8888 }],
          resources: { limits: q, requests: q },
        },
      ],
    },
    runtime: { kind: 'python-runtime', container: 'python-runtime', ports: [8888] },
    podMetadata: { annotations: { [RUNTIME_ANNOTATION]: 'python-runtime' } },
  });
  const pool = environment.addWarmPool('pool', { name: 'python', template, replicas: 1 });
  const objects = synthesizeEnvironment(environment)
    .objects.map((o) => o.object as unknown as KubeObject)
    .filter((o) => o.kind === 'SandboxTemplate' || o.kind === 'SandboxWarmPool');
  expect(objects.map((o) => o.apiVersion)).toEqual([
    'extensions.agents.x-k8s.io/v1beta1',
    'extensions.agents.x-k8s.io/v1beta1',
  ]);
  await serverSideApply(c.info.kubeconfig, objects);
  await waitFor(
    'the stand-in serving the pool member',
    90_000,
    async () => readRuntimes(runDir).find((r) => r.namespace === pyNs && r.mode === 'python-runtime' && r.pid !== null),
    250,
  );
  const steps = await new Promise<Record<string, { ok: boolean; value?: unknown }>>((resolve, reject) =>
    execFile(
      path.join(venv, 'bin', 'python'),
      ['test/client/app.py', 'router', pyNs, pool.name, `http://127.0.0.1:${connect(runDir).info.ports.routerHttp}`],
      {
        cwd: ROOT,
        env: { PATH: process.env.PATH ?? '/usr/bin:/bin', KUBECONFIG: c.info.kubeconfig, HOME: tmpdir() },
        timeout: 240_000,
        maxBuffer: 1 << 20,
      },
      (err, stdout, stderr) =>
        err
          ? reject(new Error(`app.py failed: ${err.message}\n${stderr.slice(-2000)}`))
          : resolve(JSON.parse(stdout.trim().split('\n').pop()!) as Record<string, { ok: boolean; value?: unknown }>),
    ),
  );
  expect(steps['create']?.ok).toBe(true);
  expect(steps['execute']).toEqual({ ok: true, value: expect.objectContaining({ stdout: 'hello\n', exit_code: 0 }) });
  expect(steps['delete']?.ok).toBe(true);
}, 300_000);
