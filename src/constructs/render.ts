/**
 * How an environment's objects are written, the same under `app.synth()`, `cdk8s synth`, `Testing.synth()` and
 * `agentplane synth` (which adds only the phase files and the lock): every ApiObject under the environment,
 * rendered by cdk8s (JsonPatches applied); `metadata.namespace` dropped from cluster-scoped objects (case
 * 20-chart-namespace-cluster-scoped); the phase number as Argo CD sync wave; objects too large for client-side apply
 * marked ServerSideApply=true; a descriptor ConfigMap too large for one object stored in parts (descriptor-parts.ts);
 * ordered by phase, kind, namespace, name. The checks on that output are in
 * output-checks.ts.
 */
import { ApiObject, type Chart } from './cdk8s.js';
import {
  apiGroup,
  isCoreClusterScoped,
  lastAppliedSizeBytes,
  type KubeObject,
  type LoadedRelease,
} from '../releases/index.js';
import { descriptorConfigMaps, isDescriptorConfigMap } from './descriptor-parts.js';
import { takeRenderError } from './lazy.js';
import { ANNOTATION_LAST_APPLIED, ANNOTATION_SYNC_OPTIONS, ANNOTATION_SYNC_WAVE } from './metadata.js';
import { phaseIndex, phaseOf, type Phase } from './phases.js';
import { problemOf, type EnvironmentProblem } from './problems.js';

/** Client-side apply stores the whole object in an annotation; all annotations together may hold at most this many bytes. */
export const ANNOTATION_LIMIT_BYTES = 262144;

/**
 * The API server refuses a ConfigMap or Secret whose data pass 1 MiB, and any object near etcd's 1.5 MiB request
 * limit; every object is held to 1 MiB of JSON (the descriptor ConfigMap is stored in parts well before that).
 */
export const OBJECT_LIMIT_BYTES = 1048576;

/** One rendered object with its place in the output. */
export interface RenderedObject {
  readonly phase: Phase;
  readonly constructPath: string;
  readonly object: KubeObject;
  /** Its size as JSON when over {@link ANNOTATION_LIMIT_BYTES} (then annotated ServerSideApply=true). */
  readonly oversizeBytes?: number;
}

/** The rendered objects, and the render errors of objects that could not be rendered (construct path first). */
export interface Rendering {
  readonly objects: readonly RenderedObject[];
  readonly problems: readonly EnvironmentProblem[];
}

const KIND_RANK = [
  'CustomResourceDefinition',
  'Namespace',
  'ServiceAccount',
  'ClusterRole',
  'Role',
  'ClusterRoleBinding',
  'RoleBinding',
  'ConfigMap',
  'Secret',
  'Service',
  'Deployment',
  'PodDisruptionBudget',
  'RuntimeClass',
  'SandboxTemplate',
  'SandboxWarmPool',
  'NetworkPolicy',
  'SandboxClaim',
  'Sandbox',
];

function rank(kind: string): number {
  const i = KIND_RANK.indexOf(kind);
  return i < 0 ? KIND_RANK.length : i;
}

function cmp(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}

function compareObjects(a: RenderedObject, b: RenderedObject): number {
  return (
    phaseIndex(a.phase) - phaseIndex(b.phase) ||
    rank(a.object.kind) - rank(b.object.kind) ||
    cmp(a.object.kind, b.object.kind) ||
    cmp(a.object.metadata?.namespace ?? '', b.object.metadata?.namespace ?? '') ||
    cmp(a.object.metadata?.name ?? '', b.object.metadata?.name ?? '')
  );
}

/** Whether `obj` is cluster-scoped: Agent Sandbox kinds by the release's CRD scope (`k8s/crds/*.yaml@tag`), others by the core table. */
export function isClusterScoped(obj: KubeObject, release: LoadedRelease): boolean {
  const group = apiGroup(obj.apiVersion);
  const crd = Object.values(release.facts.crds).find((c) => c.kind === obj.kind && c.group === group);
  if (crd !== undefined) return crd.scope === 'Cluster';
  return isCoreClusterScoped(obj.apiVersion, obj.kind);
}

/** Renders every ApiObject under `chart` for `release`, in apply order. */
export function renderObjects(chart: Chart, release: LoadedRelease): Rendering {
  const objects: RenderedObject[] = [];
  const problems: EnvironmentProblem[] = [];
  for (const c of chart.node.findAll()) {
    if (!ApiObject.isApiObject(c)) continue;
    let object: KubeObject;
    try {
      object = c.toJson() as KubeObject;
    } catch (err) {
      problems.push(problemOf(takeRenderError() ?? err, c.node.path));
      continue;
    }
    const phase = phaseOf(c);
    // The parts of a large descriptor belong to the same construct.
    const parts = isDescriptorConfigMap(object) ? descriptorConfigMaps(object) : [object];
    parts.forEach((part, i) =>
      objects.push(finish(part, phase, i === 0 ? c.node.path : `${c.node.path}/part-${i}`, release)),
    );
  }
  return { objects: objects.sort(compareObjects), problems };
}

/** Cluster scope, sync wave and the size marks of one rendered object. */
function finish(object: KubeObject, phase: Phase, constructPath: string, release: LoadedRelease): RenderedObject {
  const metadata = (object.metadata ??= {});
  if (isClusterScoped(object, release)) delete metadata.namespace;
  const annotations = ((metadata as Record<string, unknown>)['annotations'] ??= {}) as Record<string, string>;
  delete annotations[ANNOTATION_LAST_APPLIED];
  annotations[ANNOTATION_SYNC_WAVE] = String(phaseIndex(phase));
  const size = lastAppliedSizeBytes(object);
  if (size > ANNOTATION_LIMIT_BYTES) annotations[ANNOTATION_SYNC_OPTIONS] = 'ServerSideApply=true';
  return { phase, constructPath, object, ...(size > ANNOTATION_LIMIT_BYTES ? { oversizeBytes: size } : {}) };
}
