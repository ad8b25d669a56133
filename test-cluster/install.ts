/**
 * Installs Agent Sandbox into the running test cluster the way a user would through AgentPlane, adapted to a
 * control plane whose controller runs as a local process:
 *
 *  0. runs while the control plane boots: synthesizes first, then waits for the apiserver's /readyz;
 *  1. objects: the environment in `test-cluster/env/<release>.ts` (AgentPlane constructs, synthesized in-process) when
 *     it exists, else the release's sha256-verified objects from AgentPlane's release loader (`src/releases`);
 *  2. drops Deployments, Services and PodDisruptionBudgets (controller and router run as local processes; a
 *     Service-backed conversion webhook would make the apiserver dial a 10.x ClusterIP) and the router's own
 *     NetworkPolicy (it selects router pods that never run here, and an environment applied later that declares a
 *     router owns a policy of that name: `kubectl apply --server-side` of its policy would conflict with ours), applies
 *     everything else (CRDs, Namespaces, RBAC, ConfigMaps, RuntimeClasses, templates, warm pools, template policies);
 *  3. points each CRD's conversion webhook at `https://127.0.0.1:<webhook-port>/convert` with the local CA
 *     (v0.5.x CRDs serve v1beta1 + v1alpha1 with `strategy: Webhook`, `k8s/crds/*.yaml@v0.5.6`) — except on v0.5.0,
 *     whose controller always loads Secret `agent-sandbox-webhook-certs` and merge-patches the CRDs to the Service form
 *     at start-up (`cmd/agent-sandbox-controller/tls.go@v0.5.0`, no `--manage-webhook-certs`): there the CRDs stay as
 *     shipped, the Secret is pre-seeded with the local CA and webhook cert (SAN IP:127.0.0.1), and up.sh repoints the
 *     CRDs to the url once the controller has patched them. CRDs without a `Webhook` conversion
 *     are applied as shipped: v0.4.6 (v1alpha1 only) and v1.0.3, whose CRDs serve and store v1beta1 only and have no
 *     `spec.conversion` at all (`k8s/crds/*.yaml@v1.0.3`) — adding a clientConfig there would be refused by the
 *     apiserver (`webhookClientConfig` is forbidden unless the strategy is `Webhook`);
 *  4. server-side applies them (client-node), waits for every CRD to be Established;
 *  5. creates the kwok nodes (label agentplane.io/runtime=standin; podCIDR 127.<pod-net>.<i>.0/24, so pod IPs stay in 127.0.0.0/8);
 *  6. mints a TokenRequest token for the install's own ServiceAccount `agent-sandbox-system/agent-sandbox-controller`
 *     (`k8s/controller.yaml@tag`) and writes `<run>/controller.kubeconfig`, so the controller gets exactly the pinned RBAC;
 *     likewise `<run>/router.kubeconfig` for the ServiceAccount of the environment's router Deployment, when it has one.
 *
 * With `--upgrade` (scripts/upgrade.sh: a running cluster moves to `--release` in place) it applies the release's install
 * only: the objects of the four Agent Sandbox kinds the environment declares (templates, warm pools, claims, sandboxes)
 * are left out, since what the cluster already runs belongs to its users and an upgrade must not add sessions; pass
 * `--nodes 0` so no node is created. A CRD the API server refuses (e.g. a v1.0.x CRD while `status.storedVersions`
 * still lists v1alpha1) fails the run before anything else is applied.
 *
 * Usage: tsx test-cluster/install.ts --run DIR --release v0.5.6 --webhook-port N [--nodes 1] [--pod-net 10] [--node-labels k=v,..]
 *        [--node-taints k=v:NoSchedule,..] [--upgrade]
 */
import * as k8s from '@kubernetes/client-node';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import https from 'node:https';
import { homedir } from 'node:os';
import path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { loadRelease } from '../src/releases/load.js';
import { kubeConfigFrom, serverSideApply, waitFor, type KubeObject } from './kube.js';
import { kwokNode, parseLabels, parseTaints } from './nodes.js';

const CONTROLLER_NS = 'agent-sandbox-system';
const CONTROLLER_SA = 'agent-sandbox-controller';
/** Not applied: the controller and router run as local processes, and no Service may back a webhook (10.x ClusterIPs). */
const DROPPED_KINDS = new Set(['Deployment', 'Service', 'PodDisruptionBudget']);
const APPLY_ORDER = [
  'CustomResourceDefinition',
  'Namespace',
  'ServiceAccount',
  'ClusterRole',
  'Role',
  'ClusterRoleBinding',
  'RoleBinding',
  'ConfigMap',
  'Secret',
  'RuntimeClass',
  'SandboxTemplate',
  'SandboxWarmPool',
  'NetworkPolicy',
  'SandboxClaim',
  'Sandbox',
];
/** The router's own NetworkPolicy (SandboxRouter output), which selects the router's pods. */
const isRouterPolicy = (o: KubeObject) =>
  o.kind === 'NetworkPolicy' && o.metadata.labels?.['app.kubernetes.io/component'] === 'sandbox-router';
/** Left out by `--upgrade`: the users' objects, which the cluster already holds (or does not want). */
const SESSION_KINDS = new Set(['SandboxTemplate', 'SandboxWarmPool', 'SandboxClaim', 'Sandbox']);
const rank = (kind: string) => (APPLY_ORDER.includes(kind) ? APPLY_ORDER.indexOf(kind) : APPLY_ORDER.length);
/** Every node up.sh makes carries this label (the env's RuntimeClass `standin` selects it). */
const STANDIN_LABEL = { 'agentplane.io/runtime': 'standin' };

const { values } = parseArgs({
  options: {
    run: { type: 'string' },
    release: { type: 'string' },
    'webhook-port': { type: 'string' },
    nodes: { type: 'string', default: '1' },
    'pod-net': { type: 'string', default: '10' },
    'node-labels': { type: 'string', default: '' },
    'node-taints': { type: 'string', default: '' },
    upgrade: { type: 'boolean', default: false },
  },
});
const upgrade = values.upgrade === true;
const dropped = (o: KubeObject) =>
  DROPPED_KINDS.has(o.kind) || isRouterPolicy(o) || (upgrade && SESSION_KINDS.has(o.kind));
if (!values.run || !values.release || !values['webhook-port']) {
  throw new Error('install.ts needs --run DIR --release TAG --webhook-port PORT');
}
const run = values.run;
const release = values.release;
const webhookPort = Number(values['webhook-port']);
const kc = kubeConfigFrom(path.join(run, 'kubeconfig'));
const t0 = Date.now();
const log = (msg: string) =>
  process.stderr.write(`[test-cluster install +${((Date.now() - t0) / 1000).toFixed(1)}s] ${msg}\n`);

const objects = await installObjects(release);
log(`${objects.length} objects synthesized`);
await waitFor('kube-apiserver /readyz', 120_000, () => readyz(kc), 200);
log('kube-apiserver ready');
const caBundle = readFileSync(path.join(run, 'pki', 'ca.crt')).toString('base64');
/** v0.5.0's controller patches the CRDs itself at start-up (tls.go@v0.5.0); see step 3. */
const controllerPatchesCrds = release === 'v0.5.0';
const kept = objects
  .filter((o) => !dropped(o))
  .map((o) =>
    o.kind === 'CustomResourceDefinition' && !controllerPatchesCrds ? loopbackConversion(o, webhookPort, caBundle) : o,
  )
  .concat(controllerPatchesCrds ? [webhookCertSecret()] : [])
  .sort((a, b) => rank(a.kind) - rank(b.kind));
const withoutConversion = kept
  .filter((o) => o.kind === 'CustomResourceDefinition' && !hasWebhookConversion(o))
  .map((o) => o.metadata.name);
if (withoutConversion.length > 0)
  log(`CRDs without a conversion webhook, applied as shipped: ${withoutConversion.join(', ')}`);
const notApplied = objects.filter(dropped).map((o) => `${o.kind}/${o.metadata.name}`);
log(
  `applying ${kept.length} objects (server-side apply); not applied (controller and router run as local processes instead${upgrade ? "; an upgrade leaves the users' templates, pools, claims and sandboxes alone" : ''}): ${notApplied.join(', ') || 'none'}`,
);
const crds = kept.filter((o) => o.kind === 'CustomResourceDefinition');
await serverSideApply(path.join(run, 'kubeconfig'), crds);
const ext = kc.makeApiClient(k8s.ApiextensionsV1Api);
for (const crd of crds) {
  await waitFor(`CRD ${crd.metadata.name} Established`, 30_000, async () => {
    const live = await ext.readCustomResourceDefinition({ name: crd.metadata.name });
    return live.status?.conditions?.some((c) => c.type === 'Established' && c.status === 'True') ? true : undefined;
  });
}
// A fresh client, so its discovery sees the new API groups; retried while the groups appear in discovery.
const rest = kept.filter((o) => o.kind !== 'CustomResourceDefinition');
await waitFor(
  'the remaining objects applied',
  30_000,
  async () => (await serverSideApply(path.join(run, 'kubeconfig'), rest), true),
  200,
);

log('applied');
const core = kc.makeApiClient(k8s.CoreV1Api);
const labels = { ...STANDIN_LABEL, ...parseLabels(values['node-labels'] ?? '') };
const taints = parseTaints(values['node-taints'] ?? '');
const nodeCount = Number(values.nodes);
for (let i = 0; i < nodeCount; i++) {
  await serverSideApply(path.join(run, 'kubeconfig'), [
    kwokNode(`kwok-node-${i}`, i, labels, taints, Number(values['pod-net'])),
  ]);
}
for (let i = 0; i < nodeCount; i++) {
  await waitFor(`node kwok-node-${i} Ready`, 30_000, async () => {
    const n = await core.readNode({ name: `kwok-node-${i}` });
    return n.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ? true : undefined;
  });
}

const sa = kept.find(
  (o) => o.kind === 'ServiceAccount' && o.metadata.name === CONTROLLER_SA && o.metadata.namespace === CONTROLLER_NS,
);
if (!sa)
  throw new Error(
    `the ${release} install has no ServiceAccount ${CONTROLLER_NS}/${CONTROLLER_SA}; cannot run the controller under its own RBAC`,
  );
await writeTokenKubeconfig(CONTROLLER_NS, CONTROLLER_SA, path.join(run, 'controller.kubeconfig'));
log(`controller kubeconfig written with a TokenRequest token of ${CONTROLLER_NS}/${CONTROLLER_SA}`);

// The environment's router (SandboxRouter construct), if any: the local router process runs under its ServiceAccount.
const router = objects.find(
  (o) => o.kind === 'Deployment' && podContainers(o).some((c) => c.name === 'sandbox-router'),
);
const routerSa =
  router &&
  (router as unknown as { spec: { template: { spec: { serviceAccountName?: string } } } }).spec.template.spec
    .serviceAccountName;
if (router && routerSa) {
  await writeTokenKubeconfig(router.metadata.namespace ?? 'default', routerSa, path.join(run, 'router.kubeconfig'));
  log(`router kubeconfig written with a TokenRequest token of ${router.metadata.namespace}/${routerSa}`);
}

/** Mints a 7-day TokenRequest token for `namespace/serviceAccount` and writes a kubeconfig using it to `file` (mode 0600). */
async function writeTokenKubeconfig(namespace: string, serviceAccount: string, file: string): Promise<void> {
  const tr = await core.createNamespacedServiceAccountToken({
    namespace,
    name: serviceAccount,
    body: {
      apiVersion: 'authentication.k8s.io/v1',
      kind: 'TokenRequest',
      spec: { audiences: [], expirationSeconds: 7 * 24 * 3600 },
    },
  });
  const token = tr.status?.token;
  if (!token) throw new Error(`TokenRequest for ${namespace}/${serviceAccount} returned no token`);
  const cluster = kc.getCurrentCluster();
  if (!cluster) throw new Error('admin kubeconfig has no current cluster');
  writeFileSync(
    file,
    [
      'apiVersion: v1',
      'kind: Config',
      'clusters:',
      '- name: agentplane-test',
      '  cluster:',
      `    server: ${cluster.server}`,
      `    certificate-authority: ${path.join(run, 'pki', 'ca.crt')}`,
      'users:',
      `- name: ${serviceAccount}`,
      '  user:',
      `    token: ${token}`,
      'contexts:',
      `- name: ${serviceAccount}`,
      '  context:',
      '    cluster: agentplane-test',
      `    user: ${serviceAccount}`,
      `    namespace: ${namespace}`,
      `current-context: ${serviceAccount}`,
      '',
    ].join('\n'),
    { mode: 0o600 },
  );
}

function podContainers(o: KubeObject): { name: string }[] {
  return (
    (o as unknown as { spec?: { template?: { spec?: { containers?: { name: string }[] } } } }).spec?.template?.spec
      ?.containers ?? []
  );
}

/**
 * Objects of the environment for `tag`: from test-cluster/env/<tag>.ts (AgentPlane constructs) when present, else the
 * release loader. Synthesized objects are cached under `$AGENTPLANE_TEST_CLUSTER_CACHE/synth/<key>.json`, keyed by the
 * sha256 of every file under src/ and test-cluster/env/ plus package-lock.json (synthesis takes seconds; a warm
 * cluster:up should not pay for it when nothing changed).
 */
async function installObjects(tag: string): Promise<KubeObject[]> {
  const here = path.dirname(fileURLToPath(import.meta.url));
  const envFile = path.join(here, 'env', `${tag}.ts`);
  if (existsSync(envFile)) {
    const cacheRoot =
      process.env.AGENTPLANE_TEST_CLUSTER_CACHE ?? path.join(homedir(), '.cache', 'agentplane', 'test-cluster');
    const cacheFile = path.join(cacheRoot, 'synth', `${tag}-${synthKey(path.resolve(here, '..'))}.json`);
    if (existsSync(cacheFile)) {
      log(
        `objects synthesized by AgentPlane constructs (${path.relative(process.cwd(), envFile)}), cached ${path.basename(cacheFile)}`,
      );
      return JSON.parse(readFileSync(cacheFile, 'utf8')) as KubeObject[];
    }
    const objs = await synthesizeFrom(envFile);
    mkdirSync(path.dirname(cacheFile), { recursive: true });
    writeFileSync(`${cacheFile}.tmp${process.pid}`, JSON.stringify(objs));
    renameSync(`${cacheFile}.tmp${process.pid}`, cacheFile);
    return objs;
  }
  log(
    `no ${path.relative(process.cwd(), envFile)}; using the sha256-verified release objects of ${tag} from src/releases`,
  );
  const loaded = await loadRelease(tag);
  const out: KubeObject[] = [];
  for (const [file, objs] of loaded.objects) {
    if (!file.startsWith('k8s/')) continue; // router deploy examples and helm values are not part of the install
    for (const o of objs) out.push(o as unknown as KubeObject);
  }
  // Later files redefine earlier objects (extensions.yaml re-declares the Deployment); last one wins, like kubectl apply.
  const byId = new Map<string, KubeObject>();
  for (const o of out) byId.set(`${o.apiVersion}/${o.kind}/${o.metadata.namespace ?? ''}/${o.metadata.name}`, o);
  return [...byId.values()];
}

/** true when the apiserver of `kc` answers `GET /readyz` with 200, else undefined (install runs while the control plane boots). */
async function readyz(config: k8s.KubeConfig): Promise<true | undefined> {
  const cluster = config.getCurrentCluster();
  const user = config.getCurrentUser();
  if (!cluster) throw new Error('admin kubeconfig has no current cluster');
  const url = new URL('/readyz', cluster.server);
  const ca = cluster.caFile ? readFileSync(cluster.caFile) : undefined;
  return new Promise((resolve) => {
    const req = https.get(
      url,
      { ca, headers: user?.token ? { Authorization: `Bearer ${user.token}` } : {}, timeout: 2000 },
      (res) => {
        res.resume();
        resolve(res.statusCode === 200 ? true : undefined);
      },
    );
    req.on('timeout', () => req.destroy());
    req.on('error', () => resolve(undefined));
  });
}

async function synthesizeFrom(envFile: string): Promise<KubeObject[]> {
  const mod = (await import(pathToFileURL(envFile).href)) as {
    synthesizeInstall: () => Promise<KubeObject[]> | KubeObject[];
  };
  log(`objects synthesized by AgentPlane constructs (${path.relative(process.cwd(), envFile)})`);
  return [...(await mod.synthesizeInstall())];
}

/** sha256 (first 16 hex) over the paths and bytes of every file under <repo>/src and <repo>/test-cluster/env, and package-lock.json. */
function synthKey(repo: string): string {
  const h = createHash('sha256');
  const files = [path.join(repo, 'package-lock.json')];
  const walk = (dir: string): void => {
    for (const e of readdirSync(dir, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : 1))) {
      const p = path.join(dir, e.name);
      if (e.isDirectory()) walk(p);
      else if (e.isFile()) files.push(p);
    }
  };
  walk(path.join(repo, 'src'));
  walk(path.join(repo, 'test-cluster', 'env'));
  for (const f of files)
    h.update(path.relative(repo, f))
      .update('\0')
      .update(existsSync(f) ? readFileSync(f) : '')
      .update('\0');
  return h.digest('hex').slice(0, 16);
}

/**
 * Secret `agent-sandbox-system/agent-sandbox-webhook-certs` (keys `ca.crt`, `tls.crt`, `tls.key`, the names tls.go@v0.5.0
 * reads) holding the run's CA and webhook serving cert, so a v0.5.0 controller reuses them instead of generating a
 * cert without `IP:127.0.0.1`.
 */
function webhookCertSecret(): KubeObject {
  const b64 = (f: string) => readFileSync(path.join(run, 'pki', f)).toString('base64');
  return {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name: 'agent-sandbox-webhook-certs', namespace: CONTROLLER_NS },
    type: 'Opaque',
    data: { 'ca.crt': b64('ca.crt'), 'tls.crt': b64('webhook.crt'), 'tls.key': b64('webhook.key') },
  } as unknown as KubeObject;
}

type CrdWithConversion = KubeObject & {
  spec: { conversion?: { strategy?: string; webhook?: Record<string, unknown> } };
};

/** true when `crd` converts through a webhook (v0.5.x); false for no `spec.conversion` (v1.0.3) or strategy `None` (v0.4.6). */
function hasWebhookConversion(crd: KubeObject): boolean {
  return (crd as CrdWithConversion).spec.conversion?.strategy === 'Webhook';
}

/**
 * `crd` itself when it has no webhook conversion (nothing to repoint; the stanza is neither added nor touched), else a
 * copy whose conversion webhook is reached at `https://127.0.0.1:<port>/convert` with `caBundle`.
 */
function loopbackConversion(crd: KubeObject, port: number, caBundle: string): KubeObject {
  if (!hasWebhookConversion(crd)) return crd;
  const copy = structuredClone(crd) as CrdWithConversion;
  const conv = copy.spec.conversion!;
  conv.webhook = { ...(conv.webhook ?? {}), clientConfig: { url: `https://127.0.0.1:${port}/convert`, caBundle } };
  return copy;
}
