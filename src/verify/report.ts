/**
 * The verifier's report: one row per capability plus the compatibility tuple. This is the shape `-o json` prints;
 * its schema (`agentplane.verify/v2`) is documented in docs/output.md and checked by {@link VerifyReportSchema}.
 */
import { z } from 'zod';
import type { CapabilityName, SupportState } from '../adapter/types.js';
import type { Evidence } from './evidence.js';
import { meets, settle, type RequiredState } from './states.js';
import type { CompatibilityTuple } from './tuple.js';
import { EVIDENCE_REASONS, type EvidenceReason } from './reasons.js';

export const REPORT_SCHEMA = 'agentplane.verify/v2';

/** One capability's outcome. */
export interface CapabilityRow {
  readonly name: CapabilityName;
  readonly state: SupportState;
  readonly required: RequiredState;
  /** Whether `state` reached `required`. */
  readonly met: boolean;
  readonly evidence: readonly Evidence[];
  /** The next missing evidence in plain words; null when nothing is missing. */
  readonly next: string | null;
  /** The reason code of that evidence; null with `next`. Match this, not `next`. */
  readonly nextReason: EvidenceReason | null;
}

export interface EnvironmentSummary {
  readonly name: string;
  readonly release: string;
  /** Where the declaration came from: the environment directory, or `flags`. */
  readonly source: string;
}

export interface VerifyReport {
  readonly schema: typeof REPORT_SCHEMA;
  readonly environment: EnvironmentSummary;
  readonly tuple: CompatibilityTuple;
  readonly capabilities: readonly CapabilityRow[];
  /** Objects the workload probes created and could not delete (`Kind ns/name: why`). */
  readonly leftovers: readonly string[];
  /** `verified` only when every capability met its required state. */
  readonly outcome: 'verified' | 'not-verified';
  readonly startedAt: string;
  /** Wall time of the whole run, milliseconds. */
  readonly durationMs: number;
}

/** A declared capability and the state it must reach. */
export interface Requirement {
  readonly name: CapabilityName;
  readonly required: RequiredState;
}

/**
 * Builds a report from requirements and all evidence gathered (evidence for undeclared capabilities is dropped).
 * Rows keep the order of `requirements`.
 */
export function buildReport(input: {
  environment: EnvironmentSummary;
  tuple: CompatibilityTuple;
  requirements: readonly Requirement[];
  evidence: readonly Evidence[];
  leftovers: readonly string[];
  startedAt: string;
  durationMs: number;
}): VerifyReport {
  const capabilities = input.requirements.map((req): CapabilityRow => {
    const evidence = input.evidence.filter((e) => e.capability === req.name);
    const { state, next, nextReason } = settle(evidence);
    return {
      name: req.name,
      state,
      required: req.required,
      met: meets(state, req.required),
      evidence,
      next,
      nextReason,
    };
  });
  const outcome = capabilities.every((c) => c.met) && input.leftovers.length === 0 ? 'verified' : 'not-verified';
  const { environment, tuple, leftovers, startedAt, durationMs } = input;
  return { schema: REPORT_SCHEMA, environment, tuple, capabilities, leftovers, outcome, startedAt, durationMs };
}

const EvidenceSchema = z.object({
  capability: z.string(),
  step: z.enum(['discovered', 'compatible', 'configured', 'verified']),
  verdict: z.enum(['proven', 'unknown', 'missing', 'contradicted', 'unsupported']),
  reason: z.enum(Object.keys(EVIDENCE_REASONS) as [EvidenceReason, ...EvidenceReason[]]),
  subject: z.string(),
  field: z.string().optional(),
  value: z.string().optional(),
  observed: z.record(z.string(), z.number()).optional(),
  objects: z.array(z.string()).optional(),
  message: z.string(),
  at: z.string(),
  durationMs: z.number().optional(),
  missingTest: z.string().optional(),
  cause: z.string().optional(),
});

const TupleEntrySchema = z.object({ value: z.string(), source: z.string(), readFailed: z.string().optional() });

/** The stable `-o json` schema (agentplane.verify/v2). Extra keys are an error, so any change to the shape fails its test. */
export const VerifyReportSchema = z
  .object({
    schema: z.literal(REPORT_SCHEMA),
    environment: z.object({ name: z.string(), release: z.string(), source: z.string() }).strict(),
    tuple: z
      .object({
        kubernetes: TupleEntrySchema,
        crdRelease: TupleEntrySchema,
        controller: TupleEntrySchema,
        extensions: TupleEntrySchema,
        router: TupleEntrySchema,
        runtimeServer: TupleEntrySchema,
        clientSdk: TupleEntrySchema,
        containerRuntime: TupleEntrySchema,
        cni: TupleEntrySchema,
      })
      .strict(),
    capabilities: z.array(
      z
        .object({
          name: z.string(),
          state: z.enum(['absent', 'discovered', 'compatible', 'configured', 'verified', 'failed', 'unsupported']),
          required: z.enum(['absent', 'discovered', 'compatible', 'configured', 'verified']),
          met: z.boolean(),
          evidence: z.array(EvidenceSchema.strict()),
          next: z.string().nullable(),
          nextReason: z.enum(Object.keys(EVIDENCE_REASONS) as [EvidenceReason, ...EvidenceReason[]]).nullable(),
        })
        .strict(),
    ),
    leftovers: z.array(z.string()),
    outcome: z.enum(['verified', 'not-verified']),
    startedAt: z.string(),
    durationMs: z.number(),
  })
  .strict();
