/**
 * Probe of `warm-pool/<ns>/<name>` before any workload (case 04). A pool's `readyReplicas` counts Ready members of any
 * template version (kubernetes-sigs/agent-sandbox#1327), so the verifier counts "updated ready" itself: members
 * (Sandboxes controller-owned by the pool, not being deleted) whose blueprint is the template's current one (the
 * controller's own comparison, {@link staleness}), Ready at their current generation. discovered = the pool exists; compatible = it serves the declared
 * template; configured = status observed at the pool's generation (v0.5.6 `status.observedGeneration`) and updated
 * ready ≥ replicas, and no claim of the pool holds a stale-template sandbox ("StaleAdoption").
 * Facts: `extensions/controllers/sandboxwarmpool_controller.go@v0.5.6`, FACTS.md §1.6, §7.
 */
import { blueprintDrift, type SandboxBlueprint, type TemplateBlueprint } from '../../adapter/kubernetes/blueprint.js';
import { sandboxPhase, type SandboxObject } from '../../adapter/kubernetes/phase.js';
import type { ReleaseFamily } from '../../releases/index.js';
import type { Obj } from '../../adapter/kubernetes/cluster.js';
import type { WarmPoolPlan } from '../plan.js';
import type { Probe } from '../runner.js';
import { apiVersionOf, Facts, ref, type ProbeDeps } from './common.js';

/**
 * Differences of a Sandbox's blueprint from the template's current one (`path: sandbox value ≠ template value`, at
 * most 5), empty when current; the adapter's comparison written after the controller's own (secure defaults, Go zero
 * values, quantities: {@link blueprintDrift}), so the verifier and the adapter call the same members stale.
 */
export function staleness(sandbox: Obj, template: Obj): string[] {
  return blueprintDrift(template as TemplateBlueprint, sandbox as SandboxBlueprint);
}

export interface PoolRollout {
  readonly replicas: number;
  readonly members: number;
  readonly ready: number;
  readonly updatedReady: number;
  readonly stale: readonly string[];
  readonly staleAdoptions: readonly string[];
}

/** Rollout of one pool from live objects (pure). `sandboxes` are all Sandboxes of the namespace; `claims` all claims. */
export function poolRollout(pool: Obj, template: Obj, sandboxes: readonly Obj[], claims: readonly Obj[], family: ReleaseFamily): PoolRollout {
  const poolName = pool.metadata?.name;
  const replicas = Number((pool.spec as { replicas?: number } | undefined)?.replicas ?? 1);
  const members = sandboxes.filter(
    (s) => !(s.metadata as { deletionTimestamp?: string } | undefined)?.deletionTimestamp && (s.metadata?.ownerReferences ?? []).some((o) => o.controller && o.kind === 'SandboxWarmPool' && o.name === poolName),
  );
  let ready = 0;
  let updatedReady = 0;
  const stale: string[] = [];
  for (const m of members) {
    const isReady = sandboxPhase(m as SandboxObject, family).phase === 'Ready';
    const diff = staleness(m, template);
    if (isReady) ready += 1;
    if (diff.length > 0) stale.push(`${m.metadata?.name}: ${diff.join(', ')}`);
    else if (isReady) updatedReady += 1;
  }
  const byName = new Map(sandboxes.map((s) => [s.metadata?.name, s]));
  const staleAdoptions: string[] = [];
  for (const c of claims) {
    if ((c.spec as { warmPoolRef?: { name?: string } } | undefined)?.warmPoolRef?.name !== poolName) continue;
    const bound = (c.status as { sandbox?: { name?: string } } | undefined)?.sandbox?.name;
    const sb = bound ? byName.get(bound) : undefined;
    if (!sb) continue;
    const diff = staleness(sb, template);
    if (diff.length > 0) staleAdoptions.push(`StaleAdoption: claim ${c.metadata?.name} is bound to ${bound} (${diff.join(', ')})`);
  }
  return { replicas, members: members.length, ready, updatedReady, stale, staleAdoptions };
}

export function warmPoolProbe(deps: ProbeDeps, pool: WarmPoolPlan): Probe {
  const capability = `warm-pool/${pool.namespace}/${pool.name}` as const;
  return {
    id: capability,
    after: ['install'],
    covers: [capability],
    timeoutStep: 'configured',
    deadlineMs: 15_000,
    async run() {
      const f = new Facts(capability);
      const version = apiVersionOf(deps.facts);
      const subject = `SandboxWarmPool ${pool.namespace}/${pool.name}`;
      const r = await deps.cluster.getCustom(ref('SandboxWarmPool', version, pool.namespace), pool.name);
      if (r.kind !== 'ok') return f.failedCall('discovered', subject, r).list;
      if (r.value === undefined) return f.add('discovered', 'missing', subject, 'WarmPoolNotFound', `${subject} does not exist: apply the environment`).list;
      const live = r.value;
      f.proven('discovered', subject, 'WarmPoolFound', `${subject} exists`);
      const templateRef = (live.spec as { sandboxTemplateRef?: { name?: string } } | undefined)?.sandboxTemplateRef?.name;
      if (templateRef === pool.template) f.proven('compatible', subject, 'PoolTemplateMatches', `serves template ${pool.template}`, { field: 'spec.sandboxTemplateRef.name', value: templateRef });
      else f.add('compatible', 'missing', subject, 'PoolTemplateDiffers', `serves template ${templateRef ?? 'none'}, the environment declares ${pool.template}`, { field: 'spec.sandboxTemplateRef.name', value: templateRef ?? '' });
      const gen = live.metadata?.generation ?? 0;
      const observed = (live.status as { observedGeneration?: number } | undefined)?.observedGeneration;
      if (observed !== undefined && observed !== gen) {
        f.add('configured', 'unknown', subject, 'StaleObservedGeneration', `pool status is for generation ${observed}, spec is at ${gen}: reconcile pending`, { field: 'status.observedGeneration', value: String(observed) });
        return f.list;
      }
      const [tpl, sbs, claims] = await Promise.all([
        deps.cluster.getCustom(ref('SandboxTemplate', version, pool.namespace), pool.template),
        deps.cluster.listCustom(ref('Sandbox', version, pool.namespace)),
        deps.cluster.listCustom(ref('SandboxClaim', version, pool.namespace)),
      ]);
      if (tpl.kind !== 'ok') return f.failedCall('configured', `SandboxTemplate ${pool.namespace}/${pool.template}`, tpl).list;
      if (tpl.value === undefined) return f.add('configured', 'missing', subject, 'TemplateNotFound', `template ${pool.template} does not exist, so no member can be current`).list;
      if (sbs.kind !== 'ok') return f.failedCall('configured', `Sandboxes in ${pool.namespace}`, sbs).list;
      if (claims.kind !== 'ok') return f.failedCall('configured', `SandboxClaims in ${pool.namespace}`, claims).list;
      const ro = poolRollout(live, tpl.value, sbs.value, claims.value, deps.facts.family);
      const counts = `updated ready ${ro.updatedReady}/${ro.replicas} (members ${ro.members}, ready ${ro.ready}, stale ${ro.stale.length})`;
      if (ro.updatedReady >= ro.replicas) f.proven('configured', subject, 'PoolRolledOut', `pool ready at the current template: ${counts}`, { field: 'updatedReady', value: String(ro.updatedReady) });
      else f.add('configured', 'missing', subject, 'RolloutProgressing', `rollout progressing: ${counts}${ro.stale.length ? `; stale: ${ro.stale.slice(0, 3).join('; ')}` : ''}`, { field: 'updatedReady', value: String(ro.updatedReady) });
      for (const s of ro.staleAdoptions) f.add('configured', 'missing', subject, 'StaleAdoption', s);
      return f.list;
    },
  };
}
