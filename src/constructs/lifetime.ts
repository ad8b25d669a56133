/**
 * Claim lifetimes (case warm-claim-immortal): the `spec.lifecycle` AgentPlane writes on every SandboxClaim. Fields
 * are the same in every supported family (`k8s/crds/extensions.agents.x-k8s.io_sandboxclaims.yaml`@v0.4.6, @v0.5.0,
 * @v0.5.6): `shutdownPolicy` (CRD default `Retain`, persisted before any controller logic runs), `shutdownTime`
 * (absolute expiry) and `ttlSecondsAfterFinished` (timer from the `Finished` condition,
 * `extensions/api/v1beta1/sandboxclaim_types.go@v0.5.6`).
 */
import { z } from 'zod';

/** What expiry removes: `Delete`/`DeleteForeground` the claim and (through owner references) its Sandbox, pod, Service and PVCs; `Retain` only the Sandbox. */
export type ShutdownPolicy = 'Delete' | 'DeleteForeground' | 'Retain';

/** A bounded claim lifetime: at least one of `shutdownTime` and `ttlSecondsAfterFinished`. */
export interface ClaimLifecycle {
  /**
   * What expiry removes; always written (never left to the CRD default `Retain`, which keeps the claim object forever).
   * @default 'Delete'
   */
  readonly shutdownPolicy?: ShutdownPolicy;
  /**
   * Absolute expiry, RFC 3339 UTC (e.g. `2026-12-31T00:00:00Z`). The claim controller enforces it.
   * @default - none (give it or `ttlSecondsAfterFinished`)
   */
  readonly shutdownTime?: string;
  /**
   * Seconds after the sandbox reports `Finished` before the claim expires (≥ 0).
   * @default - none (give it or `shutdownTime`)
   */
  readonly ttlSecondsAfterFinished?: number;
}

/** The lifecycle a claim is written with; `unbounded` when it (or its environment) opted out of expiry. */
export interface ResolvedClaimLifecycle {
  readonly shutdownPolicy: ShutdownPolicy;
  readonly shutdownTime?: string;
  readonly ttlSecondsAfterFinished?: number;
  readonly unbounded: boolean;
}

const RFC3339_UTC = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?Z$/;

/**
 * zod schema of {@link ClaimLifecycle}, shared by claim and environment props.
 * @internal
 */
export const CLAIM_LIFECYCLE_SCHEMA = z
  .object({
    shutdownPolicy: z.enum(['Delete', 'DeleteForeground', 'Retain']).default('Delete'),
    shutdownTime: z
      .string()
      .regex(RFC3339_UTC, 'must be an RFC 3339 UTC time like 2026-12-31T00:00:00Z')
      .refine((t) => !Number.isNaN(Date.parse(t)), { message: 'must be a real date', params: { reason: 'NotADate' } })
      .optional(),
    ttlSecondsAfterFinished: z.number().int().min(0).max(2147483647).optional(),
  })
  .strict()
  .refine((l) => l.shutdownTime !== undefined || l.ttlSecondsAfterFinished !== undefined, {
    message:
      "give shutdownTime and/or ttlSecondsAfterFinished (a lifecycle without either never expires), or use 'unbounded' to opt out explicitly",
    params: { reason: 'NoExpiry' },
  });

/**
 * Props value of a lifecycle: a bounded one or the named opt-out.
 * @internal
 */
export const LIFECYCLE_PROP_SCHEMA = z.union([z.literal('unbounded'), CLAIM_LIFECYCLE_SCHEMA]);

/**
 * A lifecycle prop as parsed: `shutdownPolicy` filled in; an optional field may be present as `undefined` (the props
 * schema accepts an explicit `undefined`, as for every optional prop). Spelled out rather than inferred from the
 * (internal) schema, so the declaration files that use it stay whole.
 */
export type ParsedLifecycle =
  | 'unbounded'
  | {
      readonly shutdownPolicy: ShutdownPolicy;
      readonly shutdownTime?: string | undefined;
      readonly ttlSecondsAfterFinished?: number | undefined;
    };

/**
 * The claim's own lifecycle, else the environment's default; `undefined` when neither is given (the caller refuses).
 * `'unbounded'` gives `shutdownPolicy: Delete` and no expiry.
 */
export function resolveClaimLifecycle(
  own: ParsedLifecycle | undefined,
  environmentDefault: ParsedLifecycle | undefined,
): ResolvedClaimLifecycle | undefined {
  const chosen = own ?? environmentDefault;
  if (chosen === undefined) return undefined;
  if (chosen === 'unbounded') return { shutdownPolicy: 'Delete', unbounded: true };
  return {
    shutdownPolicy: chosen.shutdownPolicy,
    ...(chosen.shutdownTime !== undefined ? { shutdownTime: chosen.shutdownTime } : {}),
    ...(chosen.ttlSecondsAfterFinished !== undefined
      ? { ttlSecondsAfterFinished: chosen.ttlSecondsAfterFinished }
      : {}),
    unbounded: false,
  };
}
