/**
 * Which objects are cluster-scoped, so synthesis never writes `metadata.namespace` on them (case 20-chart-namespace-cluster-scoped).
 * Agent Sandbox kinds take their scope from the pinned CRD's `spec.scope` (`k8s/crds/*.yaml@tag`); core kinds from the table
 * in the releases layer (`CLUSTER_SCOPED_KINDS`, src/releases/scope.ts, shared with the diff).
 */
import type { KubeObject, LoadedRelease } from '../releases/index.js';
import { apiGroup, isCoreClusterScoped } from '../releases/scope.js';

export { apiGroup };

/** Whether `obj` is cluster-scoped: Agent Sandbox kinds by the release's CRD scope, others by the core table. */
export function isClusterScoped(obj: KubeObject, release: LoadedRelease): boolean {
  const group = apiGroup(obj.apiVersion);
  const crd = Object.values(release.facts.crds).find((c) => c.kind === obj.kind && c.group === group);
  if (crd !== undefined) return crd.scope === 'Cluster';
  return isCoreClusterScoped(obj.apiVersion, obj.kind);
}
