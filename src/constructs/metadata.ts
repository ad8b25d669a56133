/**
 * Label and annotation keys AgentPlane writes. The verifier reads the same keys to tell which release is live
 * and which pods belong to which template.
 */

/** Standard version label; value: the release tag, e.g. `v0.5.6`. */
export const LABEL_VERSION = 'app.kubernetes.io/version';
/** Standard managed-by label; value {@link MANAGED_BY}. */
export const LABEL_MANAGED_BY = 'app.kubernetes.io/managed-by';
export const MANAGED_BY = 'agentplane';
/** Annotation with the full upstream commit of the release the object was taken from or written for. */
export const ANNOTATION_RELEASE_COMMIT = 'agentplane.dev/release-commit';
/** Annotation with the release tag (kept next to the commit for humans). */
export const ANNOTATION_RELEASE = 'agentplane.dev/release';
/**
 * Pod label put on every sandbox pod through the template's `podTemplate.metadata.labels` (value: template name).
 * AgentPlane selects sandbox pods by this label rather than the controller's `agents.x-k8s.io/sandbox-template-ref-hash`,
 * which v0.5.0 did not stamp on warm-pool pods (case netpol-effective-coverage).
 */
export const LABEL_TEMPLATE = 'agentplane.dev/template';
/** Pod and object label naming the environment. */
export const LABEL_ENVIRONMENT = 'agentplane.dev/environment';
/** Argo CD sync wave annotation; value: the apply phase number as a string. */
export const ANNOTATION_SYNC_WAVE = 'argocd.argoproj.io/sync-wave';
/** Argo CD sync options annotation; AgentPlane writes `ServerSideApply=true` on objects too large for client-side apply. */
export const ANNOTATION_SYNC_OPTIONS = 'argocd.argoproj.io/sync-options';
/** kubectl's client-side-apply annotation; never emitted (case crd-annotation-too-long). */
export const ANNOTATION_LAST_APPLIED = 'kubectl.kubernetes.io/last-applied-configuration';
