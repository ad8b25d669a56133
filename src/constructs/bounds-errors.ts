/**
 * Errors for environments that would be unbounded, unsized or unreachable. Each carries a stable `reason`
 * code for callers and tests; the message names the construct path and both sides of a mismatch.
 */
import { ConstructError } from './errors.js';

/** A claim with no expiry and no explicit opt-out (case warm-claim-immortal). */
export class UnboundedLifetimeError extends ConstructError {
  override readonly reason = 'UnboundedLifetime';
  constructor(path: string, what: string) {
    super(
      path,
      `${what} has no lifecycle: its sandbox, pod and auto-refreshed service-account token would live until someone deletes them`,
      "give it lifecycle: { shutdownTime: '<RFC 3339 UTC>' } and/or { ttlSecondsAfterFinished: N } (shutdownPolicy defaults to Delete), " +
        "set the environment's claimLifecycle default, or opt out explicitly with lifecycle: 'unbounded'",
    );
  }
}

/** Why a pool or template cannot be scheduled on the nodes its RuntimeClass declares (case kata-runtimeclass-pending). */
export type CapacityReason = 'PodExceedsNode' | 'NodesExhausted';

/** A pool or template needs more than the nodes declared for its RuntimeClass can give (case kata-runtimeclass-pending). */
export class CapacityError extends ConstructError {
  override readonly reason: CapacityReason;
  constructor(path: string, reason: CapacityReason, message: string, hint: string) {
    super(path, message, hint);
    this.reason = reason;
  }
}

/** Why the declared router path cannot reach a runtime (cases netpol-router-peer-mismatch, router-podip-ssrf). */
export type ReachabilityReason = 'RouterPeerMismatch' | 'RuntimeListensOnLoopback' | 'RuntimePortNotAllowed';

/** The router cannot reach sandbox pods the environment routes to it; message names both sides (cases netpol-router-peer-mismatch, router-podip-ssrf). */
export class UnreachableError extends ConstructError {
  override readonly reason: ReachabilityReason;
  constructor(path: string, reason: ReachabilityReason, message: string, hint: string) {
    super(path, message, hint);
    this.reason = reason;
  }
}
