/**
 * Session phase from spec plus current-generation conditions only (docs/architecture.md, "The capability adapter"; case claim-ready-stale-generation).
 *
 * Upstream facts used (`controllers/sandbox_controller.go@{v0.4.6,v0.5.0,v0.5.6}`,
 * `extensions/controllers/sandboxclaim_controller.go@v0.5.6`):
 * - Sandbox Ready=True/`DependenciesReady` means Pod Running + Ready + an IP (+ Service); it says nothing about the runtime
 *   (`controllers/sandbox_controller.go@v0.5.6`).
 * - v0.5 suspends with `spec.operatingMode: Suspended` (condition `Suspended`); v0.4 with `spec.replicas: 0`, and then reports
 *   Ready=True with no pod (`controllers/sandbox_controller.go@v0.4.6`), so Ready is not trusted there.
 * - `Finished` True + `PodSucceeded`/`PodFailed` when the pod is terminal.
 * - A claim's Ready condition is the bound Sandbox's Ready copied verbatim, observedGeneration included
 *   (`extensions/controllers/sandboxclaim_controller.go@v0.5.6`), so a bound claim is judged by the Sandbox itself, against the
 *   Sandbox's generation, and only once the Sandbox is controller-owned by the claim (adoption finished).
 * - An unbound claim whose pool or template is absent sits at Ready=False/`WarmPoolNotFound`/`TemplateNotFound`
 *   (`extensions/controllers/sandboxclaim_controller.go@v0.5.6`). That is not terminal: the reference may be applied a
 *   moment later (case claim-before-template-ordering; kubernetes-sigs/agent-sandbox#444, fixed by #609), though the claim may then wait up to about a
 *   minute before the controller re-reconciles it (#1310/#1315, not fixed in v0.5.6). Such claims are Pending, with the
 *   condition's age.
 */
import { isBetaFamily } from '../../model/releases.js';
import type { ReleaseFamily } from '../../releases/types.js';
import type { ObservationReason } from '../reasons.js';
import type { SessionPhase } from '../types.js';
import { readCondition, type Conditioned } from './conditions.js';

export interface OwnerReference {
  readonly kind?: string;
  readonly name?: string;
  readonly uid?: string;
  readonly controller?: boolean;
}

/** Fields of a Sandbox (either version) the phase logic reads. */
export interface SandboxObject extends Conditioned {
  readonly metadata?: {
    readonly name?: string;
    readonly generation?: number;
    readonly uid?: string;
    readonly deletionTimestamp?: string | Date;
    readonly ownerReferences?: readonly OwnerReference[];
  };
  readonly spec?: { readonly operatingMode?: string; readonly replicas?: number };
  readonly status?: Conditioned['status'] & { readonly podIPs?: readonly string[] };
}

/** Fields of a SandboxClaim the phase logic reads. */
export interface ClaimObject extends Conditioned {
  readonly metadata?: {
    readonly name?: string;
    readonly generation?: number;
    readonly uid?: string;
    readonly deletionTimestamp?: string | Date;
  };
  readonly status?: Conditioned['status'] & { readonly sandbox?: { readonly name?: string } };
}

export interface PhaseJudgement {
  readonly phase: SessionPhase;
  /** Which rule decided the phase. */
  readonly reason: ObservationReason;
  /** The same in words: the condition, its upstream reason and message, the object. */
  readonly message: string;
  /** observedGeneration of the deciding condition, when one decided. */
  readonly observedGeneration?: number;
  /** Set when an unbound claim waits on a pool/template the controller did not find (Pending, not Failed). */
  readonly missingReference?: MissingReference;
}

/** An unbound claim's Ready=False/`TemplateNotFound`|`WarmPoolNotFound`, with how long it has held. */
export interface MissingReference {
  /** The claim's Ready=False reason as the controller wrote it (upstream codes, the two this rule reads). */
  readonly reason: MissingReferenceReason;
  /** Milliseconds since the condition's lastTransitionTime (at `now`); absent when the condition carries none. */
  readonly ageMs?: number;
  readonly message?: string;
}

export type MissingReferenceReason = 'TemplateNotFound' | 'WarmPoolNotFound';

/** Ready=False reasons after which the session will not become Ready by waiting. */
const FAILED_REASONS = new Set([
  'PodFailed',
  'InvalidMetadata',
  'EnvVarsInjectionRejected',
  'VolumeClaimTemplatesError',
  'AdoptionConflict',
]);
/** Claim Ready=False reasons that clear once the named pool/template exists and the controller re-reconciles (case claim-before-template-ordering). */
const MISSING_REFERENCE_REASONS: ReadonlySet<string> = new Set<MissingReferenceReason>([
  'TemplateNotFound',
  'WarmPoolNotFound',
]);
const FINISHED_REASONS = new Set(['PodSucceeded', 'SandboxExpired', 'ClaimExpired']);

function og(n: number | undefined): { observedGeneration?: number } {
  return n === undefined ? {} : { observedGeneration: n };
}

/** Phase of a Sandbox of release `family`. */
export function sandboxPhase(sb: SandboxObject, family: ReleaseFamily): PhaseJudgement {
  const name = sb.metadata?.name ?? '?';
  if (sb.metadata?.deletionTimestamp)
    return { phase: 'Terminating', reason: 'ObjectDeleting', message: `Sandbox ${name} is being deleted` };
  const finished = readCondition(sb, 'Finished');
  if (finished.value === 'true') {
    return {
      phase: finished.reason === 'PodFailed' ? 'Failed' : 'Finished',
      reason: 'PodFinished',
      message: `Finished=True/${finished.reason}`,
      ...og(finished.observedGeneration),
    };
  }
  const suspendedBySpec = isBetaFamily(family) ? sb.spec?.operatingMode === 'Suspended' : sb.spec?.replicas === 0;
  if (suspendedBySpec) {
    if (family === 'v0.4') {
      // v0.4.6 reports Ready=True/DependenciesReady for replicas 0: only the absence of pod IPs says the pod is gone.
      return (sb.status?.podIPs ?? []).length === 0
        ? { phase: 'Suspended', reason: 'Suspended', message: 'spec.replicas is 0 and no pod IPs remain' }
        : {
            phase: 'Pending',
            reason: 'Suspending',
            message: 'spec.replicas is 0 but the pod still has IPs: suspending',
          };
    }
    const suspended = readCondition(sb, 'Suspended');
    if (suspended.value === 'true')
      return {
        phase: 'Suspended',
        reason: 'Suspended',
        message: `Suspended=True/${suspended.reason}`,
        ...og(suspended.observedGeneration),
      };
    // Conditions written for an older generation say nothing about the suspension asked for since (case claim-ready-stale-generation).
    const stale = readCondition(sb, 'Ready');
    if (
      stale.present &&
      stale.observedGeneration !== undefined &&
      stale.observedGeneration !== sb.metadata?.generation
    ) {
      return {
        phase: 'Unknown',
        reason: 'ConditionsStale',
        message: `Sandbox ${name}: spec.operatingMode is Suspended; ${stale.reason}`,
        ...og(stale.observedGeneration),
      };
    }
    return {
      phase: 'Pending',
      reason: 'Suspending',
      message: `spec.operatingMode is Suspended; suspension not confirmed (${suspended.reason})`,
      ...og(suspended.observedGeneration),
    };
  }
  const ready = readCondition(sb, 'Ready');
  if (ready.value === 'true') {
    return {
      phase: 'Ready',
      reason: 'Ready',
      message: `Ready=True/${ready.reason} at generation ${ready.observedGeneration}`,
      ...og(ready.observedGeneration),
    };
  }
  if (ready.value === 'false') {
    const message = `Ready=False/${ready.reason}${ready.message ? `: ${ready.message}` : ''}`;
    const phase = FINISHED_REASONS.has(ready.reason)
      ? 'Finished'
      : FAILED_REASONS.has(ready.reason)
        ? 'Failed'
        : 'Pending';
    return { phase, reason: 'NotReady', message, ...og(ready.observedGeneration) };
  }
  return {
    phase: ready.present ? 'Unknown' : 'Pending',
    reason: ready.present ? 'ReadyUnknown' : 'NoReadyCondition',
    message: `Sandbox ${name}: ${ready.reason}`,
    ...og(ready.observedGeneration),
  };
}

/** Whole seconds, for condition ages in messages (`75s`). */
function seconds(ms: number): string {
  return `${Math.round(ms / 1000)}s`;
}

/**
 * Phase of a claim. `bound` is the Sandbox named by `status.sandbox.name` (`'missing'` when that name gives 404, undefined when
 * the claim names none). The claim's own Ready is used only while no Sandbox is bound (and only at the claim's generation).
 * An unbound claim at Ready=False/`TemplateNotFound`|`WarmPoolNotFound` is Pending with `missingReference` set, its age
 * measured from the condition's lastTransitionTime to `now` (default: the current time).
 */
export function claimPhase(
  claim: ClaimObject,
  bound: SandboxObject | 'missing' | undefined,
  family: ReleaseFamily,
  now: Date = new Date(),
): PhaseJudgement {
  const name = claim.metadata?.name ?? '?';
  if (claim.metadata?.deletionTimestamp)
    return { phase: 'Terminating', reason: 'ObjectDeleting', message: `SandboxClaim ${name} is being deleted` };
  const sandboxName = claim.status?.sandbox?.name;
  if (bound === undefined || bound === 'missing') {
    const own = readCondition(claim, 'Ready');
    if (own.value === 'false' && MISSING_REFERENCE_REASONS.has(own.reason) && bound === undefined) {
      const since = own.lastTransitionTime ? Date.parse(own.lastTransitionTime) : NaN;
      const ageMs = Number.isNaN(since) ? undefined : Math.max(0, now.getTime() - since);
      const missingReference: MissingReference = {
        reason: own.reason as MissingReferenceReason,
        ...(ageMs !== undefined ? { ageMs } : {}),
        ...(own.message ? { message: own.message } : {}),
      };
      return {
        phase: 'Pending',
        reason: 'ClaimReferenceMissing',
        message: `claim Ready=False/${own.reason}${ageMs !== undefined ? ` for ${seconds(ageMs)}` : ''}${own.message ? `: ${own.message}` : ''}`,
        ...og(own.observedGeneration),
        missingReference,
      };
    }
    if (own.value === 'false' && (FAILED_REASONS.has(own.reason) || FINISHED_REASONS.has(own.reason))) {
      return {
        phase: FINISHED_REASONS.has(own.reason) ? 'Finished' : 'Failed',
        reason: 'NotReady',
        message: `claim Ready=False/${own.reason}${own.message ? `: ${own.message}` : ''}`,
        ...og(own.observedGeneration),
      };
    }
    if (bound === 'missing')
      return {
        phase: 'Pending',
        reason: 'BoundSandboxNotFound',
        message: `bound Sandbox ${sandboxName ?? '?'} not found`,
      };
    return {
      phase: 'Pending',
      reason: 'ClaimUnbound',
      message: `no Sandbox bound yet (${own.value === 'unknown' ? own.reason : `claim Ready=${own.value === 'true' ? 'True' : 'False'}/${own.reason}`})`,
      ...og(own.observedGeneration),
    };
  }
  const judged = sandboxPhase(bound, family);
  const owner = (bound.metadata?.ownerReferences ?? []).find((o) => o.controller);
  const adopted = owner?.kind === 'SandboxClaim' && owner.uid === claim.metadata?.uid;
  if (judged.phase === 'Ready' && !adopted) {
    const by = owner ? `${owner.kind ?? '?'}/${owner.name ?? '?'}` : 'nothing';
    return {
      phase: 'Pending',
      reason: 'AdoptionIncomplete',
      message: `adoption incomplete: Sandbox ${bound.metadata?.name ?? '?'} is controlled by ${by}, not this claim`,
    };
  }
  return { ...judged, message: `bound Sandbox ${bound.metadata?.name ?? '?'}: ${judged.message}` };
}
