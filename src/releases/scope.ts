/**
 * Which core Kubernetes kinds are cluster-scoped: the API server ignores (and never returns) `metadata.namespace` on
 * them. Kubernetes API reference, kinds AgentPlane or its users plausibly emit. Custom kinds take their scope from
 * their CRD's `spec.scope` (for Agent Sandbox kinds, `k8s/crds/*.yaml@tag`); used by synthesis (case
 * 20-chart-namespace-cluster-scoped) and by the diff, which drops a stray namespace before comparing.
 */

/** `group/kind` of cluster-scoped core kinds (group `""` is written as `core`), e.g. `node.k8s.io/RuntimeClass`. */
export const CLUSTER_SCOPED_KINDS: ReadonlySet<string> = new Set([
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

/** The API group of an apiVersion: `node.k8s.io` for `node.k8s.io/v1`, `core` for `v1`. */
export function apiGroup(apiVersion: string): string {
  const slash = apiVersion.indexOf('/');
  return slash < 0 ? 'core' : apiVersion.slice(0, slash);
}

/** Whether `kind` of `apiVersion` is in {@link CLUSTER_SCOPED_KINDS} (any version of the group). False for kinds not in the table. */
export function isCoreClusterScoped(apiVersion: string, kind: string): boolean {
  return CLUSTER_SCOPED_KINDS.has(`${apiGroup(apiVersion)}/${kind}`);
}
