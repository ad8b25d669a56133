/**
 * The readiness gate the in-cluster verifier passes before it probes (case posthook-before-sandboxes-ready): Argo CD's
 * "Healthy" and a PostSync hook's start say nothing about the controller having reconciled anything, so the verifier
 * waits itself, within its own deadline, for
 * - every CRD `Established=True`;
 * - the controller Deployment `Available=True` with `status.observedGeneration` at its generation (Deployment
 *   conditions carry no generation of their own) and at least one updated replica;
 * - every warm pool's `status.readyReplicas` at `spec.replicas`, and where the release writes
 *   `status.observedGeneration` (v0.5.6 on, case warmpool-status-fields) only when it is current (an absent counter
 *   is 0).
 * It reads again every `intervalMs`, reports each change of what it still waits for through `progress`, and ends
 * ready, timed out, or at once when a pool member's pod can never start (`PoolMembersCannotStart`), with what was
 * still pending. Reads are injected (the adapter's views), so the gate runs without a
 * cluster.
 */
import type { CrdView, DeploymentView, WarmPoolView } from '../adapter/kubernetes/views.js';
import { AgentPlaneError } from '../model/errors.js';
import { POOL_STATUS, type ReleaseTag } from '../model/releases.js';

/** Reads of the live objects; undefined when the object does not exist. A thrown error counts as "pending" and is retried. */
export interface ReadinessReads {
  crd(name: string): Promise<CrdView | undefined>;
  deployment(namespace: string, name: string): Promise<DeploymentView | undefined>;
  warmPool(namespace: string, name: string): Promise<WarmPoolView | undefined>;
  /**
   * A permanent failure of a pool member's pod (FailedCreatePodSandBox for a handler the node lacks,
   * probes/pod-fault.ts), described; undefined when there is none. Asked only for a pool not Ready yet.
   */
  poolPodFault?(namespace: string, name: string): Promise<string | undefined>;
}

export interface NamespacedName {
  readonly namespace: string;
  readonly name: string;
}

/** What to wait for. */
export interface ReadinessTargets {
  readonly release: ReleaseTag;
  /** CRD names, e.g. `sandboxes.agents.x-k8s.io`. */
  readonly crds: readonly string[];
  /** The controller Deployment, when the environment installs one. */
  readonly controller?: NamespacedName;
  readonly pools: readonly NamespacedName[];
}

/** Why something is not ready yet: a stable code (reason codes of docs/output.md where one exists). */
export type PendingReason =
  | 'NotFound'
  | 'ReadFailed'
  | 'CrdNotEstablished'
  | 'StaleObservedGeneration'
  | 'ControllerNotAvailable'
  | 'PoolMembersNotReady'
  | 'PoolMembersCannotStart';

export interface Pending {
  /** e.g. `CustomResourceDefinition sandboxes.agents.x-k8s.io`, `SandboxWarmPool sbx/py-pool`. */
  readonly subject: string;
  readonly reason: PendingReason;
  readonly detail: string;
}

export interface GateResult {
  readonly ready: boolean;
  readonly waitedMs: number;
  /** What was still not ready when the gate gave up (empty when ready). */
  readonly pending: readonly Pending[];
}

export interface GateOptions {
  /** How long to wait in all, milliseconds; keep it below the Job's `activeDeadlineSeconds`. */
  readonly deadlineMs: number;
  /** @default 2000 */
  readonly intervalMs?: number;
  /** One line per change of what is pending. */
  readonly progress?: (line: string) => void;
  /** Injected clock and sleep (tests). */
  readonly now?: () => number;
  readonly sleep?: (ms: number) => Promise<void>;
}

async function read<V>(
  subject: string,
  get: () => Promise<V | undefined>,
  judge: (o: V) => Pending | undefined,
): Promise<Pending | undefined> {
  try {
    const o = await get();
    return o === undefined ? { subject, reason: 'NotFound', detail: 'does not exist yet' } : judge(o);
  } catch (err) {
    return { subject, reason: 'ReadFailed', detail: err instanceof Error ? err.message : String(err) };
  }
}

/** What of `targets` is not ready now (empty: ready). */
export async function pendingNow(targets: ReadinessTargets, reads: ReadinessReads): Promise<Pending[]> {
  const checks: Array<Promise<Pending | undefined>> = [];
  for (const name of targets.crds) {
    const subject = `CustomResourceDefinition ${name}`;
    checks.push(
      read(
        subject,
        () => reads.crd(name),
        (o) =>
          o.established ? undefined : { subject, reason: 'CrdNotEstablished', detail: 'Established is not True' },
      ),
    );
  }
  if (targets.controller) {
    const { namespace, name } = targets.controller;
    const subject = `Deployment ${namespace}/${name}`;
    checks.push(
      read(
        subject,
        () => reads.deployment(namespace, name),
        (o) => {
          const generation = o.meta.generation;
          const observed = o.observedGeneration;
          if (observed === undefined || observed < generation)
            return {
              subject,
              reason: 'StaleObservedGeneration',
              detail: `status is for generation ${observed ?? 'none'}, spec is at ${generation}`,
            };
          // The view trusts Deployment conditions only at the current generation, checked just above.
          const available = o.condition('Available');
          if (available.value === 'true' && o.updatedReplicas >= 1) return undefined;
          return {
            subject,
            reason: 'ControllerNotAvailable',
            detail: `Available=${available.present ? available.value : 'absent'} (${available.reason}), ${o.updatedReplicas} updated replica(s)`,
          };
        },
      ),
    );
  }
  for (const { namespace, name } of targets.pools) {
    const subject = `SandboxWarmPool ${namespace}/${name}`;
    checks.push(
      read(
        subject,
        () => reads.warmPool(namespace, name),
        (o) => {
          const generation = o.meta.generation;
          const observed = o.observedGeneration;
          if (POOL_STATUS[targets.release].observedGeneration && (observed === undefined || observed < generation))
            return {
              subject,
              reason: 'StaleObservedGeneration',
              detail: `status is for generation ${observed ?? 'none'}, spec is at ${generation}`,
            };
          return o.readyReplicas >= o.replicas
            ? undefined
            : {
                subject,
                reason: 'PoolMembersNotReady',
                detail: `${o.readyReplicas} of ${o.replicas} members Ready`,
              };
        },
      ).then(async (p) => {
        if (p?.reason !== 'PoolMembersNotReady' || !reads.poolPodFault) return p;
        const fault = await reads.poolPodFault(namespace, name).catch(() => undefined);
        return fault ? { subject, reason: 'PoolMembersCannotStart', detail: `${p.detail}; ${fault}` } : p;
      }),
    );
  }
  return (await Promise.all(checks)).filter((p): p is Pending => p !== undefined);
}

const line = (p: Pending): string => `${p.subject}: ${p.reason} (${p.detail})`;

/** Waits until nothing of `targets` is pending, or the deadline passes. */
export async function waitForReadiness(
  targets: ReadinessTargets,
  reads: ReadinessReads,
  opts: GateOptions,
): Promise<GateResult> {
  const now = opts.now ?? Date.now;
  const sleep = opts.sleep ?? ((ms: number) => new Promise<void>((r) => setTimeout(r, ms)));
  const interval = opts.intervalMs ?? 2000;
  const start = now();
  let last = '';
  for (;;) {
    const pending = await pendingNow(targets, reads);
    const waited = now() - start;
    const text = pending.map(line).join('; ');
    if (pending.length === 0) {
      opts.progress?.(`ready after ${Math.round(waited / 1000)}s: CRDs Established, controller Available, pools Ready`);
      return { ready: true, waitedMs: waited, pending: [] };
    }
    if (text !== last) opts.progress?.(`waiting (${Math.round(waited / 1000)}s): ${text}`);
    last = text;
    // A member that can never start (case test-node-runsc-registration) makes waiting pointless.
    if (pending.some((p) => p.reason === 'PoolMembersCannotStart')) {
      opts.progress?.(`gave up after ${Math.round(waited / 1000)}s: a pool member can never start: ${text}`);
      return { ready: false, waitedMs: waited, pending };
    }
    if (waited + interval > opts.deadlineMs) {
      opts.progress?.(`gave up after ${Math.round(waited / 1000)}s: ${text}`);
      return { ready: false, waitedMs: waited, pending };
    }
    await sleep(interval);
  }
}

/** The environment did not become ready within the wait (`verify --wait-ready`): `pending` says what was still waited for. */
export class VerifierNotReadyError extends AgentPlaneError {
  readonly reason = 'NotReady';
  readonly exitCategory = 'not-ready';
  readonly hint: string;
  constructor(
    readonly pending: readonly Pending[],
    readonly waitedMs: number,
  ) {
    super(`not ready after ${Math.round(waitedMs / 1000)}s: ${pending.map(line).join('; ')}`);
    this.hint =
      "see the pending objects: a controller image still pulling, a CRD not applied, a pool whose members do not start; raise --wait-ready (below the Job's activeDeadlineSeconds) if it is only slow";
  }
}
