/**
 * Errors for environments that would be unbounded, unsized or unreachable. Each carries a stable `reason`
 * code for callers and tests; the message names the construct path and both sides of a mismatch.
 */
import { ConstructError } from './errors.js';

/** A claim with no expiry and no explicit opt-out (case warm-claim-immortal). */
export class UnboundedLifetimeError extends ConstructError {
  override readonly reason = 'UnboundedLifetime';
  /** What would live unbounded, e.g. `claim sbx/c1`. */
  readonly what: string;
  constructor(path: string, what: string) {
    super(
      path,
      `${what} has no lifecycle: its sandbox, pod and auto-refreshed service-account token would live until someone deletes them`,
      "give it lifecycle: { shutdownTime: '<RFC 3339 UTC>' } and/or { ttlSecondsAfterFinished: N } (shutdownPolicy defaults to Delete), " +
        "set the environment's claimLifecycle default, or opt out explicitly with lifecycle: 'unbounded'",
    );
    this.what = what;
  }
}

/** Why a pool or template cannot be scheduled on the nodes its RuntimeClass declares (case kata-runtimeclass-pending). */
export type CapacityReason = 'PodExceedsNode' | 'NodesExhausted';

/** A pool or template needs more than the nodes declared for its RuntimeClass can give (case kata-runtimeclass-pending). */
export class CapacityError extends ConstructError {
  override readonly reason: CapacityReason;
  /** The figures behind the refusal: requests of the one pod (`PodExceedsNode`) or of every pod (`NodesExhausted`). */
  readonly figures: CapacityFigures;
  constructor(path: string, reason: CapacityReason, message: string, hint: string, figures: CapacityFigures) {
    super(path, message, hint);
    this.reason = reason;
    this.figures = figures;
  }
}

/** What a {@link CapacityError} counted, in Kubernetes quantities. */
export interface CapacityFigures {
  readonly runtimeClass: string;
  /** `PodExceedsNode`: the template (`namespace/name`) whose pod does not fit. */
  readonly template?: string;
  /** Requests, RuntimeClass overhead included. */
  readonly requests: { readonly cpu: string; readonly memory: string };
  readonly nodesDeclared: number;
  /** `NodesExhausted`: the nodes the pods need. */
  readonly nodesNeeded?: number;
}

/** Why the declared router path cannot reach a runtime (cases netpol-router-peer-mismatch, router-podip-ssrf). */
export type ReachabilityReason = 'RouterPeerMismatch' | 'RuntimeListensOnLoopback' | 'RuntimePortNotAllowed';

/** The router cannot reach sandbox pods the environment routes to it; message names both sides (cases netpol-router-peer-mismatch, router-podip-ssrf). */
export class UnreachableError extends ConstructError {
  override readonly reason: ReachabilityReason;
  /** Both sides of the path that cannot work. */
  readonly sides: ReachabilitySides;
  constructor(path: string, reason: ReachabilityReason, message: string, hint: string, sides: ReachabilitySides) {
    super(path, message, hint);
    this.reason = reason;
    this.sides = sides;
  }
}

/** The two sides of an {@link UnreachableError}: the template's runtime and the router (and the policy between them). */
export interface ReachabilitySides {
  /** `namespace/name`. */
  readonly template: string;
  readonly runtime?: { readonly kind: string; readonly container: string; readonly ports: readonly number[] };
  readonly router: {
    readonly namespace: string;
    readonly podLabels?: Readonly<Record<string, string>>;
    /** The TCP ports its egress allows towards sandbox pods. */
    readonly ports?: readonly number[];
  };
  /** `RouterPeerMismatch`: the controller's policy and the one peer it admits. */
  readonly policy?: {
    readonly name: string;
    readonly admits: { readonly namespace: string; readonly podLabels: Readonly<Record<string, string>> };
  };
}
