/**
 * What every probe gets (cluster access, plan, pinned release facts, runtime prober, workload tracker) and small
 * helpers to state evidence. A failed API call never advances a state: 403, timeouts and unreachable servers are
 * `unknown`; a 404 for a missing API is `missing`.
 */
import type { CapabilityName, Result } from '../../adapter/types.js';
import { FAMILY_VERSION, type SandboxKind } from '../../model/releases.js';
import { gvrAt } from '../../model/resources.js';
import type { ReleaseFacts } from '../../releases/index.js';
import type { Cluster } from '../../adapter/kubernetes/cluster.js';
import { failure } from '../../adapter/kubernetes/cluster.js';
import { ClusterReads } from '../../adapter/kubernetes/reads.js';
import { sharedReadsOf, type SharedReads } from './shared-reads.js';
import { fact, type Evidence, type Step, type Verdict } from '../evidence.js';
import type { VerifyPlan } from '../plan.js';
import type { RuntimeProber } from '../runtime-prober.js';
import type { Workload } from '../workload.js';
import type { CallReason, EvidenceReason } from '../reasons.js';

export interface ProbeDeps {
  readonly cluster: Cluster;
  readonly plan: VerifyPlan;
  readonly facts: ReleaseFacts;
  readonly runtime: RuntimeProber;
  readonly workload: Workload;
  /** Bearer token for a router that demands credentials; the negative probes' control request carries it. */
  readonly routerToken?: string;
}

/** The optional parts of a fact beside step, verdict, subject, reason and message. */
type Extra = Pick<Evidence, 'field' | 'value' | 'observed' | 'objects' | 'durationMs' | 'missingTest' | 'cause'>;

/** A recorder of evidence for one capability. */
export class Facts {
  readonly list: Evidence[] = [];
  constructor(readonly capability: CapabilityName) {}

  add(step: Step, verdict: Verdict, subject: string, reason: EvidenceReason, message: string, extra: Extra = {}): this {
    this.list.push(fact({ capability: this.capability, step, verdict, subject, reason, message, ...extra }));
    return this;
  }

  proven(
    step: Step,
    subject: string,
    reason: EvidenceReason,
    message: string,
    extra: Pick<Extra, 'field' | 'value' | 'observed' | 'durationMs'> = {},
  ): this {
    return this.add(step, 'proven', subject, reason, message, extra);
  }

  /** Evidence from a failed API call: `missing` for an API not served, `unknown` for everything else (403, timeout, unreachable). */
  failedCall(step: Step, subject: string, r: Exclude<Result<unknown>, { kind: 'ok' }>): this {
    const notServed = r.kind === 'failed' && r.error.category === 'not-found' && r.error.missing === 'api';
    const forbidden = r.kind === 'failed' && r.error.category === 'forbidden';
    const why = forbidden ? `${failure(r)} (a 403 proves nothing either way)` : failure(r);
    return this.add(
      step,
      notServed ? 'missing' : 'unknown',
      subject,
      notServed ? 'ApiNotServed' : callReason(r),
      why,
      r.kind === 'failed' ? { cause: r.error.category } : {},
    );
  }
}

/** The reason code of a failed call, from the adapter's classified cause. */
export function callReason(r: Exclude<Result<unknown>, { kind: 'ok' }>): CallReason {
  if (r.kind === 'rejected') return 'CallRejected';
  if (r.kind === 'unsupported') return 'CallUnsupported';
  if (r.error.category === 'not-found') return r.error.missing === 'api' ? 'ApiNotServed' : 'NotFound';
  const byCategory = {
    forbidden: 'Forbidden',
    unauthenticated: 'Unauthenticated',
    conflict: 'Conflict',
    gone: 'Gone',
    unreachable: 'Unreachable',
    timeout: 'Timeout',
    invalid: 'Invalid',
    'too-large': 'TooLarge',
    redirect: 'Redirected',
    runtime: 'RuntimeCallFailed',
    internal: 'InternalError',
  } as const;
  return byCategory[r.error.category];
}

/** Namespaced custom-resource address of an Agent Sandbox kind at a version. */
export function ref(
  kind: SandboxKind,
  version: string,
  namespace: string,
): { group: string; version: string; plural: string; namespace: string } {
  return { ...gvrAt(kind, version), namespace };
}

/** Typed reads of the probe's cluster at the release's family. */
export function reads(deps: Pick<ProbeDeps, 'cluster' | 'facts'>): ClusterReads {
  return new ClusterReads(deps.cluster, deps.facts.family);
}

/** Reads shared by the probes of the run (./shared-reads.ts). */
export function shared(deps: Pick<ProbeDeps, 'cluster' | 'facts'>): SharedReads {
  return sharedReadsOf(deps.cluster, () => reads(deps));
}

/** The version the product reads and writes on a release: the one of its family. */
export function apiVersionOf(facts: ReleaseFacts): string {
  return FAMILY_VERSION[facts.family];
}

/** Labels as a `k=v,...` selector string. */
export function selector(labels: Readonly<Record<string, string>>): string {
  return Object.entries(labels)
    .map(([k, v]) => `${k}=${v}`)
    .join(',');
}
