/**
 * Group/version/plural of the Agent Sandbox kinds per release family, and the label/annotation keys the adapter writes.
 * Identities: `k8s/crds/*.yaml@{v0.4.6,v0.5.0,v0.5.6}` (FACTS.md §1.1, §1.2).
 */
import type { ReleaseFamily, SandboxKind } from '../../releases/types.js';

export const CORE_GROUP = 'agents.x-k8s.io';
export const EXTENSIONS_GROUP = 'extensions.agents.x-k8s.io';

/** Where a kind lives in the API: group, version (the one the adapter reads and writes for a family) and plural. */
export interface Gvr {
  readonly group: string;
  readonly version: string;
  readonly plural: string;
}

const PLURALS: Readonly<Record<SandboxKind, { group: string; plural: string }>> = {
  Sandbox: { group: CORE_GROUP, plural: 'sandboxes' },
  SandboxClaim: { group: EXTENSIONS_GROUP, plural: 'sandboxclaims' },
  SandboxTemplate: { group: EXTENSIONS_GROUP, plural: 'sandboxtemplates' },
  SandboxWarmPool: { group: EXTENSIONS_GROUP, plural: 'sandboxwarmpools' },
};

/** Version the adapter uses per family: v1beta1 on v0.5 (storage; v1alpha1 writes leave conversion annotations), v1alpha1 on v0.4. */
export const FAMILY_VERSION: Readonly<Record<ReleaseFamily, string>> = { 'v0.4': 'v1alpha1', 'v0.5': 'v1beta1' };

/** The GVR of `kind` for `family`. */
export function gvr(kind: SandboxKind, family: ReleaseFamily): Gvr {
  return { ...PLURALS[kind], version: FAMILY_VERSION[family] };
}

/** `plural.group`, the CRD object name and the resource name used in RBAC messages. */
export function resourceName(kind: SandboxKind): string {
  const { group, plural } = PLURALS[kind];
  return `${plural}.${group}`;
}

/** Label on objects the adapter creates: sha256 prefix of the operation id (label values are limited to 63 characters). */
export const OPERATION_LABEL = 'agentplane.dev/operation';
/** Annotation carrying the full operation id. */
export const OPERATION_ANNOTATION = 'agentplane.dev/operation-id';
/** Annotation recording the SandboxTemplate generation the session was requested at. */
export const TEMPLATE_GENERATION_ANNOTATION = 'agentplane.dev/template-generation';
/** Annotation on a claim: the pool members' `agents.x-k8s.io/sandbox-template-hash` labels listed just before it was created, `{"<hash>": ["<sandbox>", …]}` (case 04). */
export const POOL_HASHES_ANNOTATION = 'agentplane.dev/pool-template-hashes';
/** Label every object AgentPlane manages carries. */
export const MANAGED_BY_LABEL = 'app.kubernetes.io/managed-by';
/** The install's release label (DESIGN.md §3: every object of a synthesized install carries it). */
export const VERSION_LABEL = 'app.kubernetes.io/version';
