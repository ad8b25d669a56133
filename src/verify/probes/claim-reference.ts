/**
 * A probe claim stuck at Ready=False/`TemplateNotFound` or `WarmPoolNotFound` (case claim-before-template-ordering). The adapter judges such a claim
 * Pending (the reference may appear later); the verifier waits at most a bounded grace for it and then says whether the
 * referenced object exists now, how long the condition has held, and what to do — instead of waiting out the whole
 * ready timeout.
 *
 * Upstream facts (`extensions/api/v1beta1/sandboxclaim_types.go@v0.5.6`): the claim names a pool (`spec.warmPoolRef.name`), the pool a template; the claim
 * controller reports the missing one as its Ready reason (`extensions/controllers/sandboxclaim_controller.go@v0.5.6`).
 * A claim created before its template stayed stuck until kubernetes-sigs/agent-sandbox#609 (#444); even after the
 * template appears the claim may wait up to about a minute for a re-reconcile (#1310/#1315, not fixed in v0.5.6).
 */
import type { MissingReference } from '../../adapter/kubernetes/phase.js';
import type { ReadinessReason } from '../reasons.js';

/** How long (ms) a probe claim may sit at `TemplateNotFound`/`WarmPoolNotFound` before the verifier stops waiting: 60 s. */
export const CLAIM_REFERENCE_GRACE_MS = 60_000;

/** The object a stuck claim's reason points at, and whether a GET found it (`unknown`: the read failed, with why). */
export interface ReferencedObject {
  readonly kind: 'SandboxTemplate' | 'SandboxWarmPool';
  readonly namespace: string;
  readonly name: string;
  readonly exists: boolean | { readonly unknown: string };
}

/** Which kind a missing-reference reason names. */
export function referencedKind(reason: MissingReference['reason']): ReferencedObject['kind'] {
  return reason === 'TemplateNotFound' ? 'SandboxTemplate' : 'SandboxWarmPool';
}

/** The reason code of a stuck claim's evidence, by whether the referenced object exists. */
export function stuckClaimReason(target: ReferencedObject): ReadinessReason {
  if (target.exists === true) return 'ClaimNotReReconciled';
  return target.exists === false ? 'ClaimReferenceMissing' : 'ClaimReferenceUnreadable';
}

/**
 * One-sentence evidence for a stuck claim `<namespace>/<claim>`: the condition and its age, whether the referenced
 * object exists, and the remedy. Pure; the caller reads the object.
 */
export function stuckClaimMessage(
  namespace: string,
  claim: string,
  stuck: MissingReference,
  target: ReferencedObject,
): string {
  const age =
    stuck.ageMs !== undefined
      ? ` for ${Math.round(stuck.ageMs / 1000)}s`
      : ' (condition carries no lastTransitionTime)';
  const head = `claim ${namespace}/${claim} Ready=False/${stuck.reason}${age}`;
  const obj = `${target.kind} ${target.namespace}/${target.name}`;
  if (target.exists === true) {
    return `${head} although ${obj} exists: the controller has not re-reconciled it (kubernetes-sigs/agent-sandbox#1310, not fixed in v0.5.6); delete and re-create the claim, or apply templates before claims (AgentPlane's phase order does)`;
  }
  if (target.exists === false) {
    return `${head}: ${obj} does not exist; apply it (templates, then pools, then claims: AgentPlane's phase order), after which the claim may still wait up to about a minute (kubernetes-sigs/agent-sandbox#1310)`;
  }
  return `${head}; whether ${obj} exists is unknown (${target.exists.unknown})`;
}
