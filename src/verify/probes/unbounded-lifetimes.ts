/**
 * Live claims and sandboxes with no expiry (case warm-claim-immortal): a SandboxClaim without
 * `spec.lifecycle.shutdownTime`/`ttlSecondsAfterFinished`, or a Sandbox owned by no claim or pool without
 * `spec.shutdownTime`, keeps its pod and auto-refreshed service-account token until someone deletes it (`api/v1beta1/sandbox_types.go@v0.5.6`, `extensions/api/v1beta1/sandboxclaim_types.go@v0.5.6`).
 * Objects older than a threshold are listed as findings: `unknown` evidence on the `controller` capability's `verified`
 * step, which never lowers the configured state the environment requires, so they show in the report without failing it.
 * Sandboxes owned by a claim follow their claim; pool members are meant to stay until claimed.
 */
import type { ClaimView, ObjectMeta, SandboxView } from '../../adapter/kubernetes/views.js';
import type { Probe } from '../runner.js';
import { Facts, reads, type ProbeDeps } from './common.js';

/** Age (ms) from which a live object without expiry is a finding: 24 h. */
export const UNBOUNDED_LIFETIME_THRESHOLD_MS = 24 * 60 * 60 * 1000;

/** One live object without expiry. */
export interface UnboundedObject {
  readonly kind: 'SandboxClaim' | 'Sandbox';
  readonly namespace: string;
  readonly name: string;
  readonly ageMs: number;
}

/** Claims and sandboxes (pure) with no expiry and older than `thresholdMs` at `now`, oldest first. */
export function unboundedObjects(
  claims: readonly ClaimView[],
  sandboxes: readonly SandboxView[],
  now: number,
  thresholdMs = UNBOUNDED_LIFETIME_THRESHOLD_MS,
): UnboundedObject[] {
  const out: UnboundedObject[] = [];
  const old = ({ createdAt }: ObjectMeta): number | undefined =>
    createdAt !== undefined && now - createdAt >= thresholdMs ? now - createdAt : undefined;
  for (const c of claims) {
    const ageMs = old(c.meta);
    if (!c.expires && ageMs !== undefined)
      out.push({ kind: 'SandboxClaim', namespace: String(c.meta.namespace), name: c.meta.name, ageMs });
  }
  for (const s of sandboxes) {
    const owned = s.meta.ownerReferences.some((r) => r.kind === 'SandboxClaim' || r.kind === 'SandboxWarmPool');
    const ageMs = old(s.meta);
    if (!owned && s.shutdownTime === undefined && ageMs !== undefined)
      out.push({ kind: 'Sandbox', namespace: String(s.meta.namespace), name: s.meta.name, ageMs });
  }
  return out.sort((a, b) => b.ageMs - a.ageMs);
}

/** Lists claims and sandboxes in the environment's namespaces and reports those without expiry older than the threshold. */
export function unboundedLifetimesProbe(deps: ProbeDeps, now: () => number = Date.now): Probe {
  const namespaces = [
    ...new Set([...deps.plan.templates.map((t) => t.namespace), ...deps.plan.warmPools.map((p) => p.namespace)]),
  ].sort();
  return {
    id: 'unbounded-lifetimes',
    after: ['install'],
    covers: ['controller'],
    timeoutStep: 'verified',
    deadlineMs: 15_000,
    async run() {
      const f = new Facts('controller');
      const read = reads(deps);
      for (const ns of namespaces) {
        const claims = await read.claims(ns);
        if (claims.kind !== 'ok') {
          f.failedCall('verified', `SandboxClaims in ${ns}`, claims);
          continue;
        }
        const sandboxes = await read.sandboxes(ns);
        if (sandboxes.kind !== 'ok') {
          f.failedCall('verified', `Sandboxes in ${ns}`, sandboxes);
          continue;
        }
        for (const u of unboundedObjects(claims.value, sandboxes.value, now())) {
          const hours = Math.floor(u.ageMs / 3_600_000);
          const field = u.kind === 'SandboxClaim' ? 'spec.lifecycle' : 'spec.shutdownTime';
          f.add(
            'verified',
            'unknown',
            `${u.kind} ${u.namespace}/${u.name}`,
            'UnboundedLifetime',
            `${u.kind} ${u.namespace}/${u.name} has lived ${hours}h with no expiry (${field} unset): it keeps its pod and service-account token until deleted`,
            { field, value: 'unset', observed: { ageMs: u.ageMs } },
          );
        }
      }
      return f.list;
    },
  };
}
