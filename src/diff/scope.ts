/**
 * Object scope for the diff: the API server ignores `metadata.namespace` on a cluster-scoped object and never returns
 * one, so a stray namespace (a cdk8s Chart namespace stamped on a RuntimeClass, case chart-namespace-cluster-scoped)
 * is dropped before objects are keyed and compared; it is never reported as drift.
 *
 * Scope comes from the core table (`CLUSTER_SCOPED_KINDS`, src/releases/scope.ts), then the `spec.scope` of the
 * CustomResourceDefinitions in the compared sets, then the pinned release's CRDs (`k8s/crds/*.yaml@tag`). Kinds none
 * of them knows keep their namespace.
 */
import type { KubeObject, LoadedRelease } from '../releases/index.js';
import { apiGroup, isCoreClusterScoped } from '../releases/scope.js';

/** Whether `kind` of `apiVersion` is cluster-scoped: true, false, or undefined when the lookup does not know the kind. */
export type ScopeLookup = (apiVersion: string, kind: string) => boolean | undefined;

interface CrdScopeView {
  group?: string;
  scope?: string;
  names?: { kind?: string };
}

/** A lookup over the CRDs found in `objects` (`spec.group`, `spec.names.kind`, `spec.scope`; other objects are ignored). */
export function scopeLookupFromObjects(objects: Iterable<KubeObject>): ScopeLookup {
  const byKind = new Map<string, boolean>();
  for (const obj of objects) {
    if (obj.kind !== 'CustomResourceDefinition') continue;
    const spec = obj.spec as CrdScopeView | undefined;
    const kind = spec?.names?.kind;
    if (spec?.group === undefined || kind === undefined || (spec.scope !== 'Cluster' && spec.scope !== 'Namespaced'))
      continue;
    byKind.set(`${spec.group}/${kind}`, spec.scope === 'Cluster');
  }
  return (apiVersion, kind) => byKind.get(`${apiGroup(apiVersion)}/${kind}`);
}

/** A lookup over the pinned CRDs of a loaded release (`facts.crds[*].scope`, from `k8s/crds/*.yaml@tag`). */
export function scopeLookupFromRelease(release: LoadedRelease): ScopeLookup {
  const byKind = new Map(Object.values(release.facts.crds).map((c) => [`${c.group}/${c.kind}`, c.scope === 'Cluster']));
  return (apiVersion, kind) => byKind.get(`${apiGroup(apiVersion)}/${kind}`);
}

/** The core table first (a CRD cannot redefine a core kind), then each lookup in turn; unknown kinds are namespaced. */
export function clusterScopedBy(...lookups: ReadonlyArray<ScopeLookup | undefined>): (obj: KubeObject) => boolean {
  return (obj) => {
    if (isCoreClusterScoped(obj.apiVersion, obj.kind)) return true;
    for (const l of lookups) {
      const s = l?.(obj.apiVersion, obj.kind);
      if (s !== undefined) return s;
    }
    return false;
  };
}

/**
 * `objects` with `metadata.namespace` dropped from the cluster-scoped ones (a shallow copy of each such object; every
 * other object, and the array itself when nothing is dropped, is returned as is, so shared parses stay shared).
 */
export function withoutClusterNamespaces(
  objects: readonly KubeObject[],
  clusterScoped: (obj: KubeObject) => boolean,
): readonly KubeObject[] {
  let out: KubeObject[] | undefined;
  objects.forEach((obj, i) => {
    if (obj.metadata?.namespace === undefined || !clusterScoped(obj)) return;
    const { namespace: _dropped, ...metadata } = obj.metadata;
    (out ??= [...objects])[i] = { ...obj, metadata };
  });
  return out ?? objects;
}
