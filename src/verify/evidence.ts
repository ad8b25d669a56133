/**
 * Evidence: what one probe saw about one capability, for one step of the support-state ladder
 * (docs/architecture.md, "Vocabulary" and "The verifier"). Every state a capability reaches is backed by evidence of this shape.
 */
import type { CapabilityName } from '../adapter/types.js';
import type { EvidenceReason } from './reasons.js';

/** The steps of the ordered ladder above `absent`, lowest first. */
export const STEPS = ['discovered', 'compatible', 'configured', 'verified'] as const;
export type Step = (typeof STEPS)[number];

/**
 * How a fact bears on its step.
 * - `proven`: the fact holds; the step may be reached if every other fact of the step holds too.
 * - `unknown`: the probe could not tell (timeout, stale condition, 403, unreachable, not run). Never advances.
 * - `missing`: the fact does not hold (object absent, right missing, wrong output). Never advances.
 * - `contradicted`: a probe saw the opposite of something a lower step established (e.g. conversion fails
 *   with a TLS error although the CRDs carry a caBundle). The capability becomes `failed`.
 * - `unsupported`: the release or cluster cannot offer this at all. The capability becomes `unsupported`.
 */
export type Verdict = 'proven' | 'unknown' | 'missing' | 'contradicted' | 'unsupported';

/** One observed fact. `value` is rendered as text; `at` is an ISO-8601 UTC time; `durationMs` in milliseconds. */
export interface Evidence {
  readonly capability: CapabilityName;
  readonly step: Step;
  readonly verdict: Verdict;
  /** The object or endpoint looked at, e.g. `CustomResourceDefinition/sandboxes.agents.x-k8s.io` or `sandboxd 127.10.0.3:9090`. */
  readonly subject: string;
  /** The field or check, e.g. `spec.versions[].served` or `Execute(echo <nonce>)`. */
  readonly field?: string;
  /** What was seen, as text. */
  readonly value?: string;
  /** Quantities the fact rests on, by name, e.g. `{ ageMs: 259200000 }` or `{ updatedReady: 1, replicas: 3 }`. */
  readonly observed?: Readonly<Record<string, number>>;
  /** Other objects the fact names beside its subject, `namespace/name`, e.g. the NetworkPolicies expected to deny a dial. */
  readonly objects?: readonly string[];
  /** Stable CamelCase code of what was seen (src/verify/reasons.ts); logic and tests match this, not `message`. */
  readonly reason: EvidenceReason;
  /** One sentence in plain words: what this means. */
  readonly message: string;
  readonly at: string;
  readonly durationMs?: number;
  /** For facts the environment cannot prove here: the acceptance test that would prove it (e.g. `netpol-enforcement`). */
  readonly missingTest?: string;
  /** For a fact that is a failed API call: the classified cause (`forbidden`, `unauthenticated`, `unreachable`, `timeout`, …; see src/adapter/types.ts AdapterError). */
  readonly cause?: string;
}

/** Input to {@link fact}: everything but the time stamp, which defaults to now. */
export type FactInput = Omit<Evidence, 'at'> & { readonly at?: string };

/** Builds one piece of evidence, stamping the current time unless `at` is given. */
export function fact(input: FactInput): Evidence {
  return { ...input, at: input.at ?? new Date().toISOString() };
}

/** Evidence that a probe did not finish within its deadline: `unknown` for the given step of each capability. */
export function timedOut(
  capabilities: readonly CapabilityName[],
  step: Step,
  probe: string,
  deadlineMs: number,
): Evidence[] {
  return capabilities.map((capability) =>
    fact({
      capability,
      step,
      verdict: 'unknown',
      reason: 'ProbeTimeout',
      subject: `probe ${probe}`,
      value: `deadline ${formatMs(deadlineMs)}`,
      message: `probe ${probe} did not finish within ${formatMs(deadlineMs)}; nothing it would have checked counts`,
      durationMs: deadlineMs,
    }),
  );
}

/** `1500` → `1.5s`, `250` → `250ms`, `5000` → `5s`. */
export function formatMs(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)}ms`;
  const s = ms / 1000;
  return Number.isInteger(s) ? `${s}s` : `${s.toFixed(1)}s`;
}
