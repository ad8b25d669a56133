/**
 * Reads the compatibility tuple from the cluster (docs/architecture.md, "Vocabulary"). Every entry is read, never assumed; what the API
 * cannot tell is `unknown` with the reason.
 */
import { PACKAGE_NAME, packageVersion } from '../model/index.js';
import { pinnedSchemaFingerprint, schemaFingerprint, type LoadedRelease, type SandboxKind } from '../releases/index.js';
import type { Cluster } from '../adapter/kubernetes/cluster.js';
import { failure } from '../adapter/kubernetes/cluster.js';
import { ClusterReads } from '../adapter/kubernetes/reads.js';
import { VERSION_LABEL } from '../adapter/kubernetes/resources.js';
import type { Result } from '../adapter/types.js';
import { familyOfTag } from '../model/releases.js';
import type { VerifyPlan } from './plan.js';
import { sharedReadsOf, type SharedReads } from './probes/shared-reads.js';
import type { CompatibilityTuple, TupleEntry } from './tuple.js';

/** CNIs recognisable by their DaemonSet name in kube-system. */
const CNI_DAEMONSETS = [
  'cilium',
  'calico-node',
  'kube-flannel-ds',
  'weave-net',
  'kindnet',
  'antrea-agent',
  'canal',
  'kube-router',
  'aws-node',
  'azure-cni',
  'netd',
  'ovnkube-node',
];

/**
 * CNIs recognisable by an annotation their node agent writes on every Node it runs on (calico-node:
 * `projectcalico.org/IPv4Address`; flanneld: `flannel.alpha.coreos.com/backend-type`, `.../public-ip`): by prefix.
 */
const CNI_NODE_ANNOTATIONS: ReadonlyArray<readonly [prefix: string, cni: string]> = [
  ['projectcalico.org/', 'calico'],
  ['flannel.alpha.coreos.com/', 'flannel'],
];

/** The CNIs whose node agents annotated `nodes` (pure), each with the node count. */
export function cniFromNodeAnnotations(
  nodes: ReadonlyArray<{ readonly meta: { readonly annotations: Readonly<Record<string, string>> } }>,
): string[] {
  return CNI_NODE_ANNOTATIONS.flatMap(([prefix, cni]) => {
    const n = nodes.filter((node) => Object.keys(node.meta.annotations).some((k) => k.startsWith(prefix))).length;
    return n > 0 ? [`${cni} (${n}/${nodes.length} node(s))`] : [];
  });
}

/**
 * The client SDK entry: the application's clients the environment declares (`k8s-agent-sandbox 1.0.8 (router)`), else
 * AgentPlane's own version from its package.json (found from src/, lib/bundle/ and lib/cjs/ alike) (its verifier is then the only client).
 */
export function clientSdkEntry(plan?: Pick<VerifyPlan, 'clients'>): TupleEntry {
  if (plan?.clients !== undefined && plan.clients.length > 0) {
    return {
      value: plan.clients.map((c) => `${c.sdk} ${c.version} (${c.mode})`).join(', '),
      source: 'environment.json clients (declared by the environment)',
    };
  }
  const version = packageVersion();
  return version === 'unknown'
    ? { value: 'unknown', source: 'package.json not found' }
    : { value: `${PACKAGE_NAME} ${version}`, source: 'package.json' };
}

const u = (source: string): TupleEntry => ({ value: 'unknown', source });

/** The `unknown` entry a failed read leaves, saying that a read failed and how. */
const unread = (r: Exclude<Result<unknown>, { kind: 'ok' }>): TupleEntry => ({
  value: 'unknown',
  source: failure(r),
  readFailed: r.kind === 'failed' ? r.error.category : r.kind,
});

/**
 * Compares each served version's live `openAPIV3Schema` with the pinned one by fingerprint (sha256 of canonical JSON).
 * Informational (reported in the tuple, it moves no state): the pinned schema is what the adapter was written against.
 */
export async function schemaComparison(cluster: Cluster, loaded: LoadedRelease): Promise<string> {
  const read = sharedCrds(cluster);
  const differ: string[] = [];
  let compared = 0;
  const kinds = Object.keys(loaded.facts.crds) as SandboxKind[];
  const crds = await Promise.all(kinds.map((kind) => read.crd(loaded.facts.crds[kind].crdName)));
  for (const [i, kind] of kinds.entries()) {
    const r = crds[i]!;
    if (r.kind !== 'ok' || !r.value) continue;
    for (const [version, schema] of Object.entries(r.value.schemas)) {
      let pinned: string;
      try {
        pinned = pinnedSchemaFingerprint(loaded, kind, version);
      } catch {
        differ.push(`${kind} ${version} (not served by ${loaded.facts.tag})`);
        continue;
      }
      compared += 1;
      if (schemaFingerprint(schema) !== pinned) differ.push(`${kind} ${version}`);
    }
  }
  if (compared === 0) return 'schema fingerprints not compared (CRDs not readable)';
  return differ.length === 0
    ? `schema fingerprints match ${loaded.facts.tag} (${compared} versions)`
    : `schema fingerprints differ from ${loaded.facts.tag}: ${differ.join(', ')}`;
}

/** CRDs through the run's shared reads: the install probe reads the same ones at the same moment. */
function sharedCrds(cluster: Cluster): SharedReads {
  return sharedReadsOf(cluster, () => new ClusterReads(cluster));
}

/**
 * Reads the tuple, its independent reads at once. `version` is the answer to `/version` when the caller already has it.
 */
export async function readTuple(
  cluster: Cluster,
  plan: VerifyPlan,
  mode: 'deployment' | 'external',
  loaded?: LoadedRelease,
  version?: Result<string>,
): Promise<CompatibilityTuple> {
  const read = new ClusterReads(cluster, familyOfTag(plan.release));
  const nodes = read.nodes();
  const [kubernetes, crdRelease, extensions, controller, containerRuntime, cni] = await Promise.all([
    (version ? Promise.resolve(version) : cluster.version()).then(kubernetesEntry),
    crdReleaseEntry(cluster, loaded),
    releaseEntry(sharedCrds(cluster), 'sandboxclaims.extensions.agents.x-k8s.io'),
    controllerEntry(read, plan, mode),
    containerRuntimeEntry(nodes),
    cniEntry(read, nodes),
  ]);

  const router: TupleEntry = plan.router
    ? {
        value: plan.router.url
          ? `sandbox-router at ${plan.router.url}`
          : `sandbox-router ${plan.router.namespace}/${plan.router.service}`,
        source: 'the router does not expose its version; location from the environment',
      }
    : { value: 'not deployed', source: 'the environment declares no router' };

  const runtimes = [
    ...new Set(plan.templates.map((t) => `${t.runtime}${t.runtimeImage ? ` (${t.runtimeImage})` : ''}`)),
  ];
  const runtimeServer: TupleEntry = runtimes.length
    ? { value: runtimes.join(', '), source: 'templates of the environment (image as declared)' }
    : { value: 'none', source: 'no templates declared' };
  return {
    kubernetes,
    crdRelease,
    controller,
    extensions,
    router,
    runtimeServer,
    clientSdk: clientSdkEntry(plan),
    containerRuntime,
    cni,
  };
}

function kubernetesEntry(version: Result<string>): TupleEntry {
  return version.kind === 'ok' ? { value: version.value, source: '/version gitVersion' } : unread(version);
}

/** The release a CRD's label names (or the family its served versions imply). */
async function releaseEntry(crds: Pick<SharedReads, 'crd'>, crdName: string): Promise<TupleEntry> {
  const r = await crds.crd(crdName);
  if (r.kind !== 'ok') return unread(r);
  if (!r.value) return { value: 'not installed', source: `CRD ${crdName} absent` };
  const label = r.value.versionLabel;
  if (label) return { value: label, source: `CRD ${crdName} label ${VERSION_LABEL}` };
  const served = r.value.served;
  return {
    value: served.includes('v1beta1') ? 'v0.5.x' : 'v0.4.x',
    source: `CRD ${crdName} serves ${served.join(', ')} (no version label)`,
  };
}

/** The core CRD's release, with the schema fingerprints compared when the pinned release is loaded. */
async function crdReleaseEntry(cluster: Cluster, loaded?: LoadedRelease): Promise<TupleEntry> {
  const [labelled, schemas] = await Promise.all([
    releaseEntry(sharedCrds(cluster), 'sandboxes.agents.x-k8s.io'),
    loaded ? schemaComparison(cluster, loaded) : undefined,
  ]);
  return schemas !== undefined && labelled.value !== 'not installed'
    ? { ...labelled, source: `${labelled.source}; ${schemas}` }
    : labelled;
}

async function controllerEntry(
  read: ClusterReads,
  plan: VerifyPlan,
  mode: 'deployment' | 'external',
): Promise<TupleEntry> {
  if (mode === 'external')
    return {
      value: 'out-of-cluster',
      source: 'declared: the controller runs outside the cluster; its version is not readable from the API',
    };
  const d = await read.deployment(plan.controller.namespace, plan.controller.deployment);
  const image = d.kind === 'ok' ? d.value?.image : undefined;
  return image
    ? { value: image, source: `Deployment ${plan.controller.namespace}/${plan.controller.deployment}` }
    : d.kind !== 'ok'
      ? unread(d)
      : u('controller Deployment not found');
}

async function containerRuntimeEntry(reading: ReturnType<ClusterReads['nodes']>): Promise<TupleEntry> {
  const nodes = await reading;
  if (nodes.kind !== 'ok') return unread(nodes);
  const values = [...new Set(nodes.value.map((n) => n.containerRuntimeVersion).filter((v): v is string => !!v))];
  return values.length
    ? { value: values.join(', '), source: `status.nodeInfo of ${nodes.value.length} node(s)` }
    : u('nodes report no containerRuntimeVersion');
}

async function cniEntry(read: ClusterReads, reading: ReturnType<ClusterReads['nodes']>): Promise<TupleEntry> {
  const [ds, nodes] = await Promise.all([read.daemonSets('kube-system'), reading]);
  if (ds.kind !== 'ok') return unread(ds);
  const found = ds.value.map((d) => d.name).filter((n) => CNI_DAEMONSETS.some((c) => n.startsWith(c)));
  const annotated = nodes.kind === 'ok' ? cniFromNodeAnnotations(nodes.value) : [];
  return found.length
    ? { value: found.join(', '), source: 'DaemonSets in kube-system' }
    : annotated.length
      ? { value: annotated.join(', '), source: 'annotations its node agent writes on Nodes' }
      : u(
          `no known CNI DaemonSet in kube-system${nodes.kind === 'ok' ? ' and no CNI annotation on any node' : ''}; NetworkPolicy enforcement cannot be assumed (network-isolation's enforcement test observes it, unnamed)`,
        );
}
