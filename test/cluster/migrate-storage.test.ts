/**
 * `agentplane migrate-storage` on the v0.5.6 test cluster, as after an upgrade from v0.4.x: objects of all four kinds
 * exist, `status.storedVersions` says [v1alpha1, v1beta1] (set here through the CRD status subresource: the shape the
 * API server leaves behind when a v0.4.x CRD is upgraded, as `PrepareForUpdate` appends the new storage version,
 * `pkg/registry/customresourcedefinition/strategy.go@v0.37.0` of k8s.io/apiextensions-apiserver), so
 * `plan-upgrade --to v1.0.3` is blocked. The dry-run changes nothing; --apply rewrites every object and prunes
 * storedVersions to [v1beta1]; every object of the test's namespace is still readable and their count is unchanged
 * (other files' objects on the shared cluster come and go meanwhile); then plan-upgrade is no longer blocked by storage.
 * Each attempt makes its namespace and storedVersions afresh, so a retry starts from the same state.
 */
import * as k8s from '@kubernetes/client-node';
import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { connect, freshNamespace, type Cluster } from './helpers.js';

const ROOT = path.resolve(import.meta.dirname, '../..');
const EXT = { group: 'extensions.agents.x-k8s.io', version: 'v1beta1' };
const CORE = { group: 'agents.x-k8s.io', version: 'v1beta1' };
const KINDS = [
  { crd: 'sandboxes.agents.x-k8s.io', ...CORE, plural: 'sandboxes', kind: 'Sandbox' },
  { crd: 'sandboxclaims.extensions.agents.x-k8s.io', ...EXT, plural: 'sandboxclaims', kind: 'SandboxClaim' },
  { crd: 'sandboxtemplates.extensions.agents.x-k8s.io', ...EXT, plural: 'sandboxtemplates', kind: 'SandboxTemplate' },
  { crd: 'sandboxwarmpools.extensions.agents.x-k8s.io', ...EXT, plural: 'sandboxwarmpools', kind: 'SandboxWarmPool' },
] as const;
const ANNOTATION = 'agentplane.dev/storage-migrated-at';
let c: Cluster;
let ext: k8s.ApiextensionsV1Api;
let ns: string;

const cli = (...args: string[]) =>
  spawnSync(process.execPath, [path.join(ROOT, 'bin/agentplane.js'), ...args], {
    cwd: ROOT,
    encoding: 'utf8',
    timeout: 240_000,
  });
const storedVersions = async (): Promise<string[][]> =>
  Promise.all(
    KINDS.map(async (k) => (await ext.readCustomResourceDefinition({ name: k.crd })).status?.storedVersions ?? []),
  );
type Item = { metadata: { namespace?: string; name: string; annotations?: Record<string, string> } };
/** This attempt's objects, per kind: other files on the shared cluster create and delete theirs meanwhile. */
const listOwn = async (): Promise<Item[][]> =>
  Promise.all(
    KINDS.map(
      async (k) =>
        (
          (await c.custom.listNamespacedCustomObject({
            group: k.group,
            version: k.version,
            namespace: ns,
            plural: k.plural,
          })) as {
            items: Item[];
          }
        ).items,
    ),
  );

const namespaces: string[] = [];

/** A namespace of this attempt's own (a retried test starts afresh), its objects, and v1alpha1 back in storedVersions. */
async function setUp(): Promise<void> {
  ns = await freshNamespace(c, 'migrate');
  namespaces.push(ns);
  const create = (k: (typeof KINDS)[number], name: string, spec: Record<string, unknown>) =>
    c.custom.createNamespacedCustomObject({
      group: k.group,
      version: k.version,
      namespace: ns,
      plural: k.plural,
      body: { apiVersion: `${k.group}/${k.version}`, kind: k.kind, metadata: { name, namespace: ns }, spec },
    });
  const pod = { spec: { containers: [{ name: 'main', image: 'registry.k8s.io/pause:3.10' }] } };
  for (let i = 0; i < 3; i++) await create(KINDS[2], `tpl-${i}`, { podTemplate: pod });
  await create(KINDS[3], 'pool', { replicas: 0, sandboxTemplateRef: { name: 'tpl-0' } });
  for (let i = 0; i < 3; i++) await create(KINDS[1], `claim-${i}`, { warmPoolRef: { name: 'pool' } });
  for (let i = 0; i < 3; i++) await create(KINDS[0], `sbx-${i}`, { podTemplate: pod, operatingMode: 'Suspended' });
  // as an upgrade from v0.4.x leaves them: v1alpha1 was once the storage version
  for (const k of KINDS)
    await ext.patchCustomResourceDefinitionStatus(
      { name: k.crd, body: { status: { storedVersions: ['v1alpha1', 'v1beta1'] } } },
      k8s.setHeaderOptions('Content-Type', k8s.PatchStrategy.MergePatch),
    );
}

beforeAll(() => {
  c = connect();
  ext = c.kc.makeApiClient(k8s.ApiextensionsV1Api);
});

afterAll(async () => {
  for (const name of namespaces) await c.core.deleteNamespace({ name }).catch(() => undefined);
});

test('blocked -> dry-run changes nothing -> --apply prunes to [v1beta1], every object readable -> plan-upgrade no longer blocked', async () => {
  await setUp();
  const kubeconfig = c.info.kubeconfig;
  expect(await storedVersions()).toEqual(KINDS.map(() => ['v1alpha1', 'v1beta1']));

  const blocked = cli('plan-upgrade', '--to', 'v1.0.3', '--kubeconfig', kubeconfig, '-o', 'json');
  expect(blocked.status).toBe(11);
  const bp = JSON.parse(blocked.stdout) as { verdict: string; findings: Array<{ reason: string }> };
  expect(bp.findings.filter((f) => f.reason === 'StoredVersionNotServed')).toHaveLength(4);

  const dry = cli('migrate-storage', '--kubeconfig', kubeconfig, '-o', 'json');
  expect(dry.status).toBe(0);
  const dr = JSON.parse(dry.stdout) as {
    mode: string;
    kinds: Array<{ kind: string; listed: number; wouldPrune: boolean }>;
  };
  expect(dr.mode).toBe('dry-run');
  expect(dr.kinds.map((k) => [k.kind, k.wouldPrune])).toEqual(KINDS.map((k) => [k.kind, true]));
  // (cold claims make their own Sandboxes: counted from here on) The dry run lists every namespace's objects.
  const before = await listOwn();
  for (const [i, k] of dr.kinds.entries()) expect(k.listed).toBeGreaterThanOrEqual(before[i]!.length);
  expect(await storedVersions()).toEqual(KINDS.map(() => ['v1alpha1', 'v1beta1']));
  expect((await listOwn()).flat().filter((o) => o.metadata.annotations?.[ANNOTATION] !== undefined)).toEqual([]);

  const apply = cli('migrate-storage', '--apply', '--kubeconfig', kubeconfig, '-o', 'json');
  expect(apply.status).toBe(0);
  const ar = JSON.parse(apply.stdout) as {
    marker: string;
    kinds: Array<{ kind: string; outcome: string; relisted: number; confirmed: number }>;
  };
  expect(ar.kinds.map((k) => [k.kind, k.outcome, k.relisted === k.confirmed])).toEqual(
    KINDS.map((k) => [k.kind, 'pruned', true]),
  );
  expect(await storedVersions()).toEqual(KINDS.map(() => ['v1beta1']));
  const after = await listOwn();
  const names = (lists: Item[][]) =>
    lists.map((l) => l.map((o) => `${o.metadata.namespace}/${o.metadata.name}`).sort());
  // nothing lost: the same objects, each readable by name and carrying the run's marker
  expect(names(after)).toEqual(names(before));
  for (const [i, k] of KINDS.entries())
    for (const o of after[i]!) {
      const got = (await c.custom.getNamespacedCustomObject({
        group: k.group,
        version: k.version,
        plural: k.plural,
        namespace: ns,
        name: o.metadata.name,
      })) as Item;
      expect(got.metadata.annotations?.[ANNOTATION]).toBe(ar.marker);
    }
  expect(after.map((l) => l.length)).toEqual(before.map((l) => l.length));

  const plan = cli('plan-upgrade', '--to', 'v1.0.3', '--kubeconfig', kubeconfig, '-o', 'json');
  expect(plan.status).toBe(10);
  const pp = JSON.parse(plan.stdout) as { verdict: string; findings: Array<{ reason: string }> };
  expect(pp.verdict).toBe('needs-migration');
  expect(pp.findings.map((f) => f.reason)).not.toContain('StoredVersionNotServed');
  expect(pp.findings.map((f) => f.reason)).toEqual(
    expect.arrayContaining(['ConversionWebhookRemoved', 'CrdsBeforeController', 'OrphanedWebhookObjects']),
  );
}, 300_000);
