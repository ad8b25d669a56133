/**
 * The v0.5 probe object, made the way a client makes one: a SandboxClaim through the adapter's `createFromTemplate` on
 * the template's declared warm pool, or on a labelled empty (zero-replica) pool of the verifier's own when none is declared,
 * from which the claim cold-starts its Sandbox from the template (no pool member is filled, adopted and replaced).
 * Then two watches: 1) the claim names a Sandbox; 2) that Sandbox is Ready at its generation and controlled by the
 * claim (case claim-ready-stale-generation), ended early by a permanent FailedCreatePodSandBox of its pod (pod-fault.ts,
 * case test-node-runsc-registration). A claim sitting at TemplateNotFound/WarmPoolNotFound is waited for at most the grace (case claim-before-template-ordering).
 */
import type { MissingReference } from '../../../adapter/kubernetes/phase.js';
import type { ViewWait } from '../../../adapter/kubernetes/reads.js';
import { sessionName } from '../../../adapter/kubernetes/sessions.js';
import { claimWithSandbox, type ClaimView } from '../../../adapter/kubernetes/views.js';
import { formatMs } from '../../evidence.js';
import type { TemplatePlan, WarmPoolPlan } from '../../plan.js';
import type { ProbeRun } from '../../runner.js';
import {
  CLAIM_REFERENCE_GRACE_MS,
  referencedKind,
  stuckClaimMessage,
  stuckClaimReason,
  type ReferencedObject,
} from '../claim-reference.js';
import { reads, ref, type ProbeDeps } from '../common.js';
import { describePodFault, watchPodFaults } from '../pod-fault.js';
import { reconnected, settled, type Readiness } from './readiness.js';

export async function claimAndWait(
  deps: ProbeDeps,
  template: TemplatePlan,
  declared: WarmPoolPlan | undefined,
  ctx: ProbeRun,
  prefix = 'p',
): Promise<Readiness> {
  const started = Date.now();
  const pool = declared ?? (await probePool(deps, template, ctx, prefix));
  if ('refused' in pool)
    return { ready: false, reason: 'ProbeCreateRefused', why: pool.refused, waitedMs: Date.now() - started };
  const claimName = await createClaim(deps, template, pool, ctx);
  if (typeof claimName !== 'string')
    return { ready: false, reason: 'ProbeCreateRefused', why: claimName.refused, waitedMs: Date.now() - started };
  const bound = await waitBound(deps, pool, claimName, started, ctx);
  if (bound.kind === 'not-bound') return bound.readiness;
  return waitSandboxReady(deps, pool, claimName, bound.claim, started, ctx);
}

/**
 * An empty pool of the verifier's own, labelled, so the claim path (the only v1beta1 way to a sandbox) can run: with no
 * member to adopt the claim controller cold-starts a Sandbox named after the claim (`sandboxclaim_controller.go@v0.5.6`).
 */
async function probePool(
  deps: ProbeDeps,
  template: TemplatePlan,
  ctx: ProbeRun,
  prefix: string,
): Promise<WarmPoolPlan | { refused: string }> {
  const name = deps.workload.name(`${prefix}-${template.name}`);
  const pref = ref('SandboxWarmPool', 'v1beta1', template.namespace);
  deps.workload.track(pref, 'SandboxWarmPool', name);
  ctx.note(
    `template ${template.name} has no warm pool: creating probe SandboxWarmPool ${template.namespace}/${name} (replicas 0)`,
  );
  const made = await reads(deps)
    .at('v1beta1')
    .createWarmPool(template.namespace, { name, labels: deps.workload.labels(), template: template.name, replicas: 0 });
  deps.workload.created(pref, name, made);
  if (made.kind !== 'ok')
    return {
      refused: `could not create probe SandboxWarmPool ${name}: ${made.kind === 'failed' ? made.error.message : made.message}`,
    };
  return { namespace: template.namespace, name, template: template.name, replicas: 0 };
}

/** Creates the probe claim through the adapter (the client path); its name, or why the create was refused. */
async function createClaim(
  deps: ProbeDeps,
  template: TemplatePlan,
  pool: WarmPoolPlan,
  ctx: ProbeRun,
): Promise<string | { refused: string }> {
  const adapter = deps.workload.adapter();
  const operationId = `agentplane-verify/${deps.workload.runId}/${pool.namespace}/${pool.name}`;
  const cref = ref('SandboxClaim', 'v1beta1', pool.namespace);
  const claimName = sessionName(pool.name, operationId);
  deps.workload.track(cref, 'SandboxClaim', claimName);
  ctx.note(`creating probe SandboxClaim ${pool.namespace}/${claimName} on pool ${pool.name}`);
  const created = await adapter.createFromTemplate(
    { namespace: pool.namespace, template: template.name, warmPool: pool.name },
    '',
    operationId,
  );
  deps.workload.created(cref, claimName, created);
  if (created.kind !== 'ok')
    return {
      refused: `could not create probe claim on ${pool.name}: ${created.kind === 'failed' ? created.error.message : created.message}`,
    };
  return claimName;
}

type Bound =
  { readonly kind: 'bound'; readonly claim: ClaimView } | { readonly kind: 'not-bound'; readonly readiness: Readiness };

/**
 * Waits until the claim names a Sandbox. The watch sees no event while nothing changes, so the wait runs in slices of
 * the grace and a TemplateNotFound/WarmPoolNotFound condition's age is checked after each.
 */
async function waitBound(
  deps: ProbeDeps,
  pool: WarmPoolPlan,
  claimName: string,
  started: number,
  ctx: ProbeRun,
): Promise<Bound> {
  const read = reads(deps).at('v1beta1');
  const graceMs = deps.plan.claimReferenceGraceMs ?? CLAIM_REFERENCE_GRACE_MS;
  let view: ClaimView | undefined;
  const stuck = (): MissingReference | undefined => {
    const m = view?.phase.missingReference;
    return m && (m.ageMs ?? Date.now() - started) >= graceMs ? m : undefined;
  };
  let bound: ViewWait<ClaimView>;
  for (;;) {
    const left = deps.plan.readyTimeoutMs - (Date.now() - started);
    bound = await read.waitClaim(
      pool.namespace,
      claimName,
      (c) => {
        view = c;
        return c?.boundSandbox !== undefined || stuck() !== undefined;
      },
      { timeoutMs: Math.max(0, Math.min(left, graceMs)), signal: ctx.signal, progress: ctx.note },
    );
    if (bound.kind !== 'timeout' || ctx.signal.aborted || stuck() || Date.now() - started >= deps.plan.readyTimeoutMs)
      break;
  }
  const held = stuck();
  if (held && view?.boundSandbox === undefined) {
    const target = await referencedObject(deps, pool, held);
    return {
      kind: 'not-bound',
      readiness: {
        ready: false,
        reason: stuckClaimReason(target),
        why: stuckClaimMessage(pool.namespace, claimName, held, target),
        ...(view ? { claim: view } : {}),
        waitedMs: Date.now() - started,
      },
    };
  }
  if (bound.kind !== 'matched') {
    const own = view ? view.phase.message : 'claim not readable';
    const limit = ctx.signal.aborted
      ? 'was interrupted before it bound a Sandbox'
      : `bound no Sandbox within ${formatMs(deps.plan.readyTimeoutMs)}`;
    const reason = ctx.signal.aborted ? 'ProbeInterrupted' : 'ClaimNotBound';
    return {
      kind: 'not-bound',
      readiness: {
        ready: false,
        reason,
        why: `claim ${claimName} ${limit} (${own})`,
        ...(view ? { claim: view } : {}),
        waitedMs: Date.now() - started,
      },
    };
  }
  return { kind: 'bound', claim: bound.view };
}

/** Waits until the bound Sandbox is Ready at its generation and controlled by the claim (the claim's phase says so). */
async function waitSandboxReady(
  deps: ProbeDeps,
  pool: WarmPoolPlan,
  claimName: string,
  claim: ClaimView,
  started: number,
  ctx: ProbeRun,
): Promise<Readiness> {
  const sbName = claim.boundSandbox!;
  let last = '';
  let pod = sbName;
  const remaining = Math.max(1000, deps.plan.readyTimeoutMs - (Date.now() - started));
  const faults = watchPodFaults(deps, pool.namespace, () => [pod], ctx.signal);
  const w = await reads(deps)
    .at('v1beta1')
    .waitSandbox(
      pool.namespace,
      sbName,
      (sb) => {
        if (sb) pod = sb.podName;
        const p = claimWithSandbox(claim, sb ?? 'missing').phase;
        last = p.message;
        return settled(p.phase);
      },
      { timeoutMs: remaining, signal: faults.signal, progress: ctx.note },
    );
  const fault = await faults.stop();
  const waitedMs = Date.now() - started;
  if (fault && w.kind !== 'matched')
    return {
      ready: false,
      reason: 'ProbePodCannotStart',
      why: `claim ${claimName}: ${describePodFault(pool.namespace, fault)}`,
      claim,
      ...(w.kind === 'timeout' && w.last ? { sandbox: w.last } : {}),
      waitedMs,
    };
  if (w.kind === 'matched') {
    const view = claimWithSandbox(claim, w.view);
    const sandbox = w.view;
    if (view.phase.phase === 'Ready')
      return { ready: true, why: `${view.phase.message}${reconnected(w)}`, sandbox, claim: view, waitedMs };
    return { ready: false, reason: 'ProbeSandboxEnded', why: view.phase.message, sandbox, claim: view, waitedMs };
  }
  const view = claim;
  if (w.kind === 'failed')
    return {
      ready: false,
      reason: 'ProbeWatchFailed',
      why: `watching Sandbox ${sbName} failed: ${w.error.message}`,
      claim: view,
      waitedMs,
    };
  const limit = ctx.signal.aborted
    ? 'interrupted before it was ready'
    : `not ready within ${formatMs(deps.plan.readyTimeoutMs)}`;
  const reason = ctx.signal.aborted ? 'ProbeInterrupted' : 'ProbeNotReadyInTime';
  return {
    ready: false,
    reason,
    why: `claim ${claimName} ${limit}: ${last}`,
    claim: view,
    ...(w.last ? { sandbox: w.last } : {}),
    waitedMs,
  };
}

/** The pool or template a stuck probe claim's reason names, and whether it exists now. */
async function referencedObject(
  deps: ProbeDeps,
  pool: WarmPoolPlan,
  held: MissingReference,
): Promise<ReferencedObject> {
  const kind = referencedKind(held.reason);
  const name = kind === 'SandboxTemplate' ? pool.template : pool.name;
  const r = await reads(deps).at('v1beta1').exists(kind, pool.namespace, name);
  const exists = r.kind === 'ok' ? r.value : { unknown: r.kind === 'failed' ? r.error.message : r.kind };
  return { kind, namespace: pool.namespace, name, exists };
}
