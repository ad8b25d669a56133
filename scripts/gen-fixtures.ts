/**
 * Regenerates the contract fixtures test/contract/fixtures/<release>.json: real objects written by the real
 * controller of that release on the test cluster (test-cluster/README.md). For each release it creates, in a fresh
 * namespace, a SandboxTemplate, a SandboxWarmPool (1 replica), a SandboxClaim on that pool, a bare Sandbox and a
 * suspended one (v0.4: `replicas: 0`), and on v0.5 and v1.0 (v1beta1) a claim built by the adapter itself (`KubeSessions.createFromTemplate`),
 * waits until the controller has acted (claims Ready, pool refilled, suspension reported), then stores each object as applied (`desired`) and as read back (`live`), plus the controller-made
 * NetworkPolicy and the CRDs' served/storage/storedVersions.
 *
 *   npx tsx scripts/gen-fixtures.ts --kubeconfig test-cluster/.run/kubeconfig --release v0.5.6
 *
 * The release must be the one the cluster runs (`cluster:up -- --release <tag>`; v0.5.0's controller is built only on
 * request: `bash test-cluster/scripts/build.sh agent-sandbox-v0.5.0`).
 */
import * as k8s from '@kubernetes/client-node';
import { mkdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { KubeClient } from '../src/adapter/kubernetes/client.js';
import { KubeSessions } from '../src/adapter/kubernetes/sessions.js';

const args = process.argv.slice(2);
const flag = (name: string): string | undefined => args[args.indexOf(`--${name}`) + 1];
const kubeconfig = flag('kubeconfig');
const release = flag('release');
if (!kubeconfig || !release || !['v0.4.6', 'v0.5.0', 'v0.5.6', 'v1.0.3'].includes(release)) {
  process.stderr.write('usage: gen-fixtures.ts --kubeconfig FILE --release v0.4.6|v0.5.0|v0.5.6|v1.0.3\n');
  process.exit(2);
}
const ROOT = path.resolve(import.meta.dirname, '..');
const v1beta1 = release !== 'v0.4.6';
const version = v1beta1 ? 'v1beta1' : 'v1alpha1';
const EXT = { group: 'extensions.agents.x-k8s.io', version };
const CORE = { group: 'agents.x-k8s.io', version };
type Obj = Record<string, unknown> & {
  metadata?: { name?: string; namespace?: string; generation?: number; labels?: Record<string, string> };
  status?: Record<string, unknown>;
};

const kc = new k8s.KubeConfig();
kc.loadFromFile(kubeconfig);
const core = kc.makeApiClient(k8s.CoreV1Api);
const co = kc.makeApiClient(k8s.CustomObjectsApi);
const ext = kc.makeApiClient(k8s.ApiextensionsV1Api);
const net = kc.makeApiClient(k8s.NetworkingV1Api);
const ns = `contract-${release.replace(/\./g, '')}`;

async function waitFor<T>(what: string, ms: number, probe: () => Promise<T | undefined>): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await probe().catch(() => undefined);
    if (v !== undefined) return v;
    if (Date.now() > end) throw new Error(`gen-fixtures: timed out after ${ms} ms waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

const cond = (o: Obj, type: string): { status?: string; reason?: string } | undefined =>
  ((o.status?.conditions as Array<{ type: string; status: string; reason?: string }> | undefined) ?? []).find(
    (c) => c.type === type,
  );

const podSpec = { containers: [{ name: 'main', image: 'registry.k8s.io/pause:3.10' }] };
const podMeta = { annotations: { 'test-cluster.agentplane.io/runtime': 'none' } };
const labels = { 'app.kubernetes.io/managed-by': 'agentplane', 'agentplane.io/contract': release };

const template: Obj = {
  apiVersion: `${EXT.group}/${version}`,
  kind: 'SandboxTemplate',
  metadata: { name: 'contract', namespace: ns, labels },
  spec: { podTemplate: { metadata: podMeta, spec: podSpec } },
};
const pool: Obj = {
  apiVersion: `${EXT.group}/${version}`,
  kind: 'SandboxWarmPool',
  metadata: { name: 'contract', namespace: ns, labels },
  spec: { replicas: 1, sandboxTemplateRef: { name: 'contract' } },
};
const claim: Obj = {
  apiVersion: `${EXT.group}/${version}`,
  kind: 'SandboxClaim',
  metadata: { name: 'contract-claim', namespace: ns, labels },
  spec: v1beta1
    ? { warmPoolRef: { name: 'contract' } }
    : { sandboxTemplateRef: { name: 'contract' }, warmpool: 'contract' },
};
const sandbox = (name: string, suspended: boolean): Obj => ({
  apiVersion: `${CORE.group}/${version}`,
  kind: 'Sandbox',
  metadata: { name, namespace: ns, labels },
  spec: {
    podTemplate: { metadata: podMeta, spec: podSpec },
    ...(suspended ? (v1beta1 ? { operatingMode: 'Suspended' } : { replicas: 0 }) : {}),
  },
});
const bare = sandbox('contract-bare', false);
const suspended = sandbox('contract-suspended', true);

const plural: Record<string, string> = {
  SandboxTemplate: 'sandboxtemplates',
  SandboxWarmPool: 'sandboxwarmpools',
  SandboxClaim: 'sandboxclaims',
  Sandbox: 'sandboxes',
};
const ref = (o: Obj): { group: string; version: string; namespace: string; plural: string } => ({
  ...(o.kind === 'Sandbox' ? CORE : EXT),
  namespace: ns,
  plural: plural[String(o.kind)]!,
});
const get = async (o: Obj, name = String(o.metadata?.name)): Promise<Obj> =>
  (await co.getNamespacedCustomObject({ ...ref(o), name })) as Obj;

await core.deleteNamespace({ name: ns }).catch(() => undefined);
await waitFor(`namespace ${ns} gone`, 120_000, async () =>
  (await core
    .readNamespace({ name: ns })
    .then(() => false)
    .catch(() => true))
    ? true
    : undefined,
);
await core.createNamespace({ body: { metadata: { name: ns } } });
for (const o of [template, pool, bare, suspended]) await co.createNamespacedCustomObject({ ...ref(o), body: o });
await waitFor('warm pool readyReplicas 1', 60_000, async () =>
  ((await get(pool)).status?.readyReplicas as number | undefined) === 1 ? true : undefined,
);
await co.createNamespacedCustomObject({ ...ref(claim), body: claim });
const liveClaim = await waitFor('claim Ready=True with a bound sandbox', 60_000, async () => {
  const c = await get(claim);
  return cond(c, 'Ready')?.status === 'True' && (c.status?.sandbox as { name?: string } | undefined)?.name
    ? c
    : undefined;
});
const boundName = (liveClaim.status!.sandbox as { name: string }).name;
// On v0.5 and v1.0 the adapter builds a claim itself (createFromTemplate): the fixture then holds the adapter's own object as the controller left it.
let adapterClaim: Obj | undefined;
if (v1beta1) {
  await waitFor('warm pool refilled before the adapter claim', 60_000, async () =>
    ((await get(pool)).status?.readyReplicas as number | undefined) === 1 ? true : undefined,
  );
  const created = await new KubeSessions(KubeClient.connect({ kubeconfig })).createFromTemplate(
    { namespace: ns, template: 'contract', warmPool: 'contract' },
    '',
    'contract-operation-1',
  );
  if (created.kind !== 'ok')
    throw new Error(`gen-fixtures: the adapter could not create a claim: ${JSON.stringify(created)}`);
  adapterClaim = await waitFor('adapter claim Ready=True', 60_000, async () => {
    const c = await get(claim, created.value.name);
    return cond(c, 'Ready')?.status === 'True' ? c : undefined;
  });
}
await waitFor('bare sandbox Ready=True', 60_000, async () =>
  cond(await get(bare), 'Ready')?.status === 'True' ? true : undefined,
);
await waitFor('suspended sandbox reported', 60_000, async () => {
  const s = await get(suspended);
  return v1beta1
    ? cond(s, 'Suspended')?.status === 'True'
      ? true
      : undefined
    : cond(s, 'Ready') !== undefined
      ? true
      : undefined;
});
await waitFor('warm pool refilled after the adoption', 60_000, async () =>
  ((await get(pool)).status?.readyReplicas as number | undefined) === 1 ? true : undefined,
);

const objects: Array<{ name: string; desired?: Obj; live: Obj }> = [
  { name: 'template', desired: template, live: await get(template) },
  { name: 'pool', desired: pool, live: await get(pool) },
  { name: 'claim', desired: claim, live: await get(claim) },
  { name: 'claimed-sandbox', live: await get(bare, boundName) },
  { name: 'bare-sandbox', desired: bare, live: await get(bare) },
  { name: 'suspended-sandbox', desired: suspended, live: await get(suspended) },
  ...(adapterClaim ? [{ name: 'adapter-claim', live: await get(claim, String(adapterClaim.metadata?.name)) }] : []),
];
const policies = (await net.listNamespacedNetworkPolicy({ namespace: ns })).items;
for (const p of policies)
  objects.push({
    name: `networkpolicy/${p.metadata?.name}`,
    live: JSON.parse(JSON.stringify({ apiVersion: 'networking.k8s.io/v1', kind: 'NetworkPolicy', ...p })) as Obj,
  });
const crds: Record<string, unknown> = {};
for (const name of [
  'sandboxes.agents.x-k8s.io',
  'sandboxclaims.extensions.agents.x-k8s.io',
  'sandboxtemplates.extensions.agents.x-k8s.io',
  'sandboxwarmpools.extensions.agents.x-k8s.io',
]) {
  const crd = await ext.readCustomResourceDefinition({ name });
  crds[crd.spec.names.kind] = {
    served: crd.spec.versions.filter((v) => v.served).map((v) => v.name),
    storage: crd.spec.versions.find((v) => v.storage)?.name,
    storedVersions: crd.status?.storedVersions ?? [],
  };
}
const kubernetes = (await kc.makeApiClient(k8s.VersionApi).getCode()).gitVersion;
await core.deleteNamespace({ name: ns });

const out = path.join(ROOT, 'test/contract/fixtures', `${release}.json`);
mkdirSync(path.dirname(out), { recursive: true });
writeFileSync(
  out,
  `${JSON.stringify({ release, generatedBy: 'scripts/gen-fixtures.ts', kubernetes, crds, objects }, null, 2)}\n`,
);
process.stdout.write(`wrote ${path.relative(ROOT, out)}: ${objects.length} objects\n`);
