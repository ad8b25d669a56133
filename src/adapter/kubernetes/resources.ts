/** The label/annotation keys the adapter writes; the kinds' group/version/plural come from src/model. */

/** Label on objects the adapter creates: sha256 prefix of the operation id (label values are limited to 63 characters). */
export const OPERATION_LABEL = 'agentplane.dev/operation';
/** Annotation carrying the full operation id. */
export const OPERATION_ANNOTATION = 'agentplane.dev/operation-id';
/** Annotation recording the SandboxTemplate generation the session was requested at. */
export const TEMPLATE_GENERATION_ANNOTATION = 'agentplane.dev/template-generation';
/** Annotation on a claim: the pool members' `agents.x-k8s.io/sandbox-template-hash` labels listed just before it was created, `{"<hash>": ["<sandbox>", …]}` (case recreate-adopts-stale-template). */
export const POOL_HASHES_ANNOTATION = 'agentplane.dev/pool-template-hashes';
/** Label every object AgentPlane manages carries. */
export const MANAGED_BY_LABEL = 'app.kubernetes.io/managed-by';
/** The install's release label (docs/architecture.md, "Releases and pinning": every object of a synthesized install carries it). */
export const VERSION_LABEL = 'app.kubernetes.io/version';
