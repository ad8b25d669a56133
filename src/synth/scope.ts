/**
 * Which objects are cluster-scoped, so synthesis never writes `metadata.namespace` on them (case 20-chart-namespace-cluster-scoped).
 * Agent Sandbox kinds take their scope from the pinned CRD's `spec.scope` (`k8s/crds/*.yaml@tag`); core kinds from this table
 * (Kubernetes API reference, kinds AgentPlane or its users plausibly emit).
 */
import type { KubeObject, LoadedRelease } from '../releases/index.js';

/** `group/kind` of cluster-scoped core kinds (group `""` is written as `core`). */
const CLUSTER_SCOPED = new Set([
  'core/Namespace',
  'core/Node',
  'core/PersistentVolume',
  'rbac.authorization.k8s.io/ClusterRole',
  'rbac.authorization.k8s.io/ClusterRoleBinding',
  'apiextensions.k8s.io/CustomResourceDefinition',
  'apiregistration.k8s.io/APIService',
  'node.k8s.io/RuntimeClass',
  'scheduling.k8s.io/PriorityClass',
  'storage.k8s.io/StorageClass',
  'storage.k8s.io/CSIDriver',
  'storage.k8s.io/VolumeAttachment',
  'networking.k8s.io/IngressClass',
  'admissionregistration.k8s.io/ValidatingWebhookConfiguration',
  'admissionregistration.k8s.io/MutatingWebhookConfiguration',
  'admissionregistration.k8s.io/ValidatingAdmissionPolicy',
  'admissionregistration.k8s.io/ValidatingAdmissionPolicyBinding',
  'flowcontrol.apiserver.k8s.io/FlowSchema',
  'flowcontrol.apiserver.k8s.io/PriorityLevelConfiguration',
  'certificates.k8s.io/CertificateSigningRequest',
]);

/** The API group of an apiVersion (`core` for `v1`). */
export function apiGroup(apiVersion: string): string {
  const slash = apiVersion.indexOf('/');
  return slash < 0 ? 'core' : apiVersion.slice(0, slash);
}

/** Whether `obj` is cluster-scoped: Agent Sandbox kinds by the release's CRD scope, others by the core table. */
export function isClusterScoped(obj: KubeObject, release: LoadedRelease): boolean {
  const group = apiGroup(obj.apiVersion);
  const crd = Object.values(release.facts.crds).find((c) => c.kind === obj.kind && c.group === group);
  if (crd !== undefined) return crd.scope === 'Cluster';
  return CLUSTER_SCOPED.has(`${group}/${obj.kind}`);
}
