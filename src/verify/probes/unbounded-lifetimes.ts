/**
 * Live claims and sandboxes with no expiry (case warm-claim-immortal): a SandboxClaim without
 * `spec.lifecycle.shutdownTime`/`ttlSecondsAfterFinished`, or a Sandbox owned by no claim or pool without
 * `spec.shutdownTime`, keeps its pod and auto-refreshed service-account token until someone deletes it (`api/v1beta1/sandbox_types.go@v0.5.6`, `extensions/api/v1beta1/sandboxclaim_types.go@v0.5.6`).
 * Objects older than a threshold are listed as findings: `unknown` evidence on the `controller` capability's `verified`
 * step, which never lowers the configured state the environment requires, so they show in the report without failing it.
 * Sandboxes owned by a claim follow their claim; pool members are meant to stay until claimed.
 */
import type { Obj } from '../../adapter/kubernetes/cluster.js';
import type { Probe } from '../runner.js';
import { apiVersionOf, Facts, ref, type ProbeDeps } from './common.js';

/** Age (ms) from which a live object without expiry is a finding: 24 h. */
export const UNBOUNDED_LIFETIME_THRESHOLD_MS = 24 * 60 * 60 * 1000;

/** One live object without expiry. */
export interface UnboundedObject {
  readonly kind: 'SandboxClaim' | 'Sandbox';
  readonly namespace: string;
  readonly name: string;
  readonly ageMs: number;
}

function created(o: Obj): number | undefined {
  const t = (o.metadata as { creationTimestamp?: string } | undefined)?.creationTimestamp;
  const ms = t === undefined ? NaN : Date.parse(t);
  return Number.isNaN(ms) ? undefined : ms;
}

/** Claims and sandboxes (pure) with no expiry and older than `thresholdMs` at `now`, oldest first. */
export function unboundedObjects(
  claims: readonly Obj[],
  sandboxes: readonly Obj[],
  now: number,
  thresholdMs = UNBOUNDED_LIFETIME_THRESHOLD_MS,
): UnboundedObject[] {
  const out: UnboundedObject[] = [];
  const old = (o: Obj): number | undefined => {
    const at = created(o);
    return at !== undefined && now - at >= thresholdMs ? now - at : undefined;
  };
  for (const c of claims) {
    const lc = ((c['spec'] as Record<string, unknown> | undefined)?.['lifecycle'] ?? {}) as Record<string, unknown>;
    const ageMs = old(c);
    if (lc['shutdownTime'] === undefined && lc['ttlSecondsAfterFinished'] === undefined && ageMs !== undefined) {
      out.push({
        kind: 'SandboxClaim',
        namespace: String(c.metadata?.namespace),
        name: String(c.metadata?.name),
        ageMs,
      });
    }
  }
  for (const s of sandboxes) {
    const owned = (s.metadata?.ownerReferences ?? []).some(
      (r) => r.kind === 'SandboxClaim' || r.kind === 'SandboxWarmPool',
    );
    const ageMs = old(s);
    if (
      !owned &&
      (s['spec'] as Record<string, unknown> | undefined)?.['shutdownTime'] === undefined &&
      ageMs !== undefined
    ) {
      out.push({ kind: 'Sandbox', namespace: String(s.metadata?.namespace), name: String(s.metadata?.name), ageMs });
    }
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
      const version = apiVersionOf(deps.facts);
      for (const ns of namespaces) {
        const claims = await deps.cluster.listCustom(ref('SandboxClaim', version, ns));
        if (claims.kind !== 'ok') {
          f.failedCall('verified', `SandboxClaims in ${ns}`, claims);
          continue;
        }
        const sandboxes = await deps.cluster.listCustom(ref('Sandbox', version, ns));
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
            { field, value: 'unset' },
          );
        }
      }
      return f.list;
    },
  };
}
