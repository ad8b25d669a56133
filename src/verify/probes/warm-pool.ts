/**
 * Probe of `warm-pool/<ns>/<name>` before any workload (case recreate-adopts-stale-template). A pool's `readyReplicas` counts Ready members of any
 * template version (kubernetes-sigs/agent-sandbox#1327), so the verifier counts "updated ready" itself: members
 * (Sandboxes controller-owned by the pool, not being deleted) whose blueprint is the template's current one (the
 * controller's own comparison, {@link staleness}), Ready at their current generation. discovered = the pool exists; compatible = it serves the declared
 * template; configured = status observed at the pool's generation (v0.5.6 `status.observedGeneration`; on a release
 * that writes it, an absent one is "PoolObservedGenerationMissing"), updated ready ≥ replicas, the status counters
 * agree with the members the verifier counts (else "PoolStatusStale", case warmpool-status-fields), and no claim of
 * the pool holds a stale-template sandbox ("StaleAdoption"). A pool still starting members (just applied, or
 * refilling after a claim) is read again until it is not, within the ready timeout.
 * Facts: `extensions/controllers/sandboxwarmpool_controller.go@v0.5.6`,
 * `extensions/api/v1beta1/sandboxwarmpool_types.go@v0.5.6`.
 */
import { blueprintDrift } from '../../adapter/kubernetes/blueprint.js';
import type { ClaimView, SandboxView, TemplateView, WarmPoolView } from '../../adapter/kubernetes/views.js';
import { sleep } from '../../adapter/kubernetes/cluster.js';
import { POOL_STATUS } from '../../model/releases.js';
import type { WarmPoolPlan } from '../plan.js';
import { formatMs } from '../evidence.js';
import type { Probe } from '../runner.js';
import { Facts, reads, type ProbeDeps } from './common.js';
import type { NodeSandboxFailure } from './pod-events.js';
import { describePodFault, permanentPodFault } from './pod-fault.js';

/**
 * Differences of a Sandbox's blueprint from the template's current one (`path: sandbox value ≠ template value`, at
 * most 5), empty when current; the adapter's comparison written after the controller's own (secure defaults, Go zero
 * values, quantities: {@link blueprintDrift}), so the verifier and the adapter call the same members stale.
 */
export function staleness(sandbox: SandboxView, template: TemplateView): string[] {
  return blueprintDrift(template.blueprint, sandbox.blueprint);
}

export interface PoolRollout {
  readonly replicas: number;
  readonly members: number;
  readonly ready: number;
  readonly updatedReady: number;
  readonly stale: readonly string[];
  readonly staleAdoptions: readonly StaleAdoption[];
  /** Pod names of the members not Ready yet. */
  readonly starting: readonly string[];
}

/** A claim of the pool bound to a sandbox that is not at the current template, and how the two differ. */
export interface StaleAdoption {
  readonly claim: string;
  readonly sandbox: string;
  /** The blueprint differences, as {@link staleness} lists them. */
  readonly drift: readonly string[];
}

/** Rollout of one pool from live objects (pure). `sandboxes` are all Sandboxes of the namespace; `claims` all claims. */
export function poolRollout(
  pool: WarmPoolView,
  template: TemplateView,
  sandboxes: readonly SandboxView[],
  claims: readonly ClaimView[],
): PoolRollout {
  const poolName = pool.meta.name;
  const replicas = pool.replicas;
  const members = sandboxes.filter(
    (s) =>
      !s.meta.deleting &&
      s.meta.ownerReferences.some((o) => o.controller && o.kind === 'SandboxWarmPool' && o.name === poolName),
  );
  let ready = 0;
  let updatedReady = 0;
  const stale: string[] = [];
  const starting: string[] = [];
  for (const m of members) {
    const isReady = m.phase.phase === 'Ready';
    if (!isReady) starting.push(m.podName);
    const diff = staleness(m, template);
    if (isReady) ready += 1;
    if (diff.length > 0) stale.push(`${m.meta.name}: ${diff.join(', ')}`);
    else if (isReady) updatedReady += 1;
  }
  const byName = new Map(sandboxes.map((s) => [s.meta.name, s]));
  const staleAdoptions: StaleAdoption[] = [];
  for (const c of claims) {
    if (c.warmPool !== poolName) continue;
    const bound = c.boundSandbox;
    const sb = bound ? byName.get(bound) : undefined;
    if (!bound || !sb) continue;
    const drift = staleness(sb, template);
    if (drift.length > 0) staleAdoptions.push({ claim: c.meta.name, sandbox: bound, drift });
  }
  return { replicas, members: members.length, ready, updatedReady, stale, staleAdoptions, starting };
}

/** A status counter that disagrees with the verifier's own count of the pool's members. */
export interface StatusDisagreement {
  readonly field: 'status.replicas' | 'status.readyReplicas';
  /** The counter as written; an absent counter is 0 (`omitempty`). */
  readonly written: number;
  readonly counted: number;
}

/**
 * The status counters of `pool` that disagree with `ro` (pure): `status.replicas` counts live members and
 * `status.readyReplicas` Ready ones (`extensions/controllers/sandboxwarmpool_controller.go@v0.5.6`).
 */
export function statusDisagreements(pool: WarmPoolView, ro: PoolRollout): StatusDisagreement[] {
  const pairs = [
    { field: 'status.replicas', written: pool.counters.replicas ?? 0, counted: ro.members },
    { field: 'status.readyReplicas', written: pool.counters.readyReplicas ?? 0, counted: ro.ready },
  ] as const;
  return pairs.filter((p) => p.written !== p.counted);
}

/** How often a refilling pool's members are read again. */
const SETTLE_POLL_MS = 2_000;

/**
 * Whether the pool is short of current Ready members while some are still coming (fewer members than replicas, or
 * members not Ready yet): waiting can change the verdict. Stale members that are Ready wait for a claim
 * (`updateStrategy: OnReplenish`), so they are judged at once.
 */
export function refilling(ro: PoolRollout): boolean {
  return ro.updatedReady < ro.replicas && (ro.members < ro.replicas || ro.ready < ro.members);
}

export function warmPoolProbe(deps: ProbeDeps, pool: WarmPoolPlan): Probe {
  const capability = `warm-pool/${pool.namespace}/${pool.name}` as const;
  return {
    id: capability,
    after: ['install'],
    covers: [capability],
    timeoutStep: 'configured',
    deadlineMs: 15_000 + deps.plan.readyTimeoutMs,
    async run(ctx) {
      const f = new Facts(capability);
      const read = reads(deps);
      const subject = `SandboxWarmPool ${pool.namespace}/${pool.name}`;
      const r = await read.warmPool(pool.namespace, pool.name);
      if (r.kind !== 'ok') return f.failedCall('discovered', subject, r).list;
      if (r.value === undefined)
        return f.add(
          'discovered',
          'missing',
          subject,
          'WarmPoolNotFound',
          `${subject} does not exist: apply the environment`,
        ).list;
      const live = r.value;
      f.proven('discovered', subject, 'WarmPoolFound', `${subject} exists`);
      const templateRef = live.templateName;
      if (templateRef === pool.template)
        f.proven('compatible', subject, 'PoolTemplateMatches', `serves template ${pool.template}`, {
          field: 'spec.sandboxTemplateRef.name',
          value: templateRef,
        });
      else
        f.add(
          'compatible',
          'missing',
          subject,
          'PoolTemplateDiffers',
          `serves template ${templateRef ?? 'none'}, the environment declares ${pool.template}`,
          { field: 'spec.sandboxTemplateRef.name', value: templateRef ?? '' },
        );
      const traits = POOL_STATUS[deps.facts.tag];
      const gen = live.meta.generation;
      const observed = live.observedGeneration;
      if (observed === undefined && traits.observedGeneration) {
        f.add(
          'configured',
          'unknown',
          subject,
          'PoolObservedGenerationMissing',
          `pool status carries no observedGeneration although ${deps.facts.tag} writes one: it may describe no spec at all`,
          { field: 'status.observedGeneration', value: '' },
        );
        return f.list;
      }
      if (observed !== undefined && observed !== gen) {
        f.add(
          'configured',
          'unknown',
          subject,
          'StaleObservedGeneration',
          `pool status is for generation ${observed}, spec is at ${gen}: reconcile pending`,
          { field: 'status.observedGeneration', value: String(observed) },
        );
        return f.list;
      }
      const members = () =>
        Promise.all([
          read.sandboxes(pool.namespace),
          read.claims(pool.namespace),
          read.warmPool(pool.namespace, pool.name),
        ]);
      const firstRead = members();
      firstRead.catch(() => undefined); // awaited below; a throw there must not go unhandled if the template read ends the probe first
      const tpl = await read.template(pool.namespace, pool.template);
      if (tpl.kind !== 'ok')
        return f.failedCall('configured', `SandboxTemplate ${pool.namespace}/${pool.template}`, tpl).list;
      if (tpl.value === undefined)
        return f.add(
          'configured',
          'missing',
          subject,
          'TemplateNotFound',
          `template ${pool.template} does not exist, so no member can be current`,
        ).list;
      // A pool refilling after a claim, or just applied, is starting members: wait for them (bounded), then judge.
      // A member whose pod can never start (permanent FailedCreatePodSandBox, pod-fault.ts) ends the wait.
      const started = Date.now();
      let ro: PoolRollout;
      let disagree: StatusDisagreement[];
      let recounted = false;
      let fault: NodeSandboxFailure | undefined;
      for (let round = 0; ; round += 1) {
        const [sbs, claims, again] = await (round === 0 ? firstRead : members());
        if (sbs.kind !== 'ok') return f.failedCall('configured', `Sandboxes in ${pool.namespace}`, sbs).list;
        if (claims.kind !== 'ok') return f.failedCall('configured', `SandboxClaims in ${pool.namespace}`, claims).list;
        if (again.kind !== 'ok') return f.failedCall('configured', subject, again).list;
        // The pool is read with its members so that its status is compared with a count of the same moment.
        const now = again.value ?? live;
        ro = poolRollout(now, tpl.value, sbs.value, claims.value);
        disagree = statusDisagreements(now, ro);
        const timeUp = Date.now() - started >= deps.plan.readyTimeoutMs;
        if (refilling(ro) && !timeUp) {
          if (round > 0 && ro.starting.length > 0) {
            const ev = await read.events(pool.namespace, 'involvedObject.kind=Pod,reason=FailedCreatePodSandBox');
            fault = ev.kind === 'ok' ? permanentPodFault(ev.value, new Set(ro.starting)) : undefined;
            if (fault) break;
          }
          ctx.note(
            `waiting for ${subject} to refill: ${ro.ready} of ${ro.members} member(s) ready, ${ro.replicas} wanted`,
            'waiting',
          );
        } else if (disagree.length > 0 && !recounted && !timeUp) {
          // A status write trails a member's change by a reconcile: count once more before calling the status stale.
          recounted = true;
        } else break;
        if (!(await sleep(SETTLE_POLL_MS, ctx.signal))) break;
      }
      const waitedMs = Date.now() - started;
      const waited = waitedMs >= SETTLE_POLL_MS ? ` after waiting ${formatMs(waitedMs)}` : '';
      const stopped = fault ? `; stopped waiting: ${describePodFault(pool.namespace, fault)}` : '';
      const counts = `updated ready ${ro.updatedReady}/${ro.replicas} (members ${ro.members}, ready ${ro.ready}, stale ${ro.stale.length})${waited}${stopped}`;
      const quantities = {
        updatedReady: ro.updatedReady,
        replicas: ro.replicas,
        members: ro.members,
        ready: ro.ready,
        stale: ro.stale.length,
        ...(waited ? { waitedMs } : {}),
      };
      if (ro.updatedReady >= ro.replicas)
        f.proven('configured', subject, 'PoolRolledOut', `pool ready at the current template: ${counts}`, {
          field: 'updatedReady',
          value: String(ro.updatedReady),
          observed: quantities,
        });
      else
        f.add(
          'configured',
          'missing',
          subject,
          'RolloutProgressing',
          `rollout progressing: ${counts}${ro.stale.length ? `; stale: ${ro.stale.slice(0, 3).join('; ')}` : ''}`,
          { field: 'updatedReady', value: String(ro.updatedReady), observed: quantities },
        );
      for (const d of disagree)
        f.add(
          'configured',
          'unknown',
          subject,
          'PoolStatusStale',
          `pool ${d.field} says ${d.written}, the verifier counts ${d.counted}${
            traits.clearsZeroCounters
              ? ''
              : ` (${deps.facts.tag} keeps the last non-zero counters after scaling to zero)`
          }: consumers reading the status are misled`,
          { field: d.field, value: String(d.written), observed: { written: d.written, counted: d.counted } },
        );
      for (const s of ro.staleAdoptions)
        f.add(
          'configured',
          'missing',
          subject,
          'StaleAdoption',
          `claim ${s.claim} is bound to ${s.sandbox}, which is not at the current template (${s.drift.join(', ')})`,
          { field: `SandboxClaim ${s.claim}`, value: s.sandbox },
        );
      return f.list;
    },
  };
}
