/**
 * The workload test: proves capabilities by using them the way a client does. Per declared template it creates
 * labelled probe objects — on v0.5 a SandboxClaim through the adapter's `createFromTemplate` (the client path) on the
 * template's declared warm pool, or on an empty SandboxWarmPool of its own when none is declared; on v0.4 a bare
 * Sandbox with the template's pod template — waits (watch, bounded) for the Sandbox to be Ready at its current
 * generation, then asks the runtime two distinct nonce commands over the client's transport.
 *
 * `verified` needs all of: Ready=True at the Sandbox's current generation (a claim is judged by its bound Sandbox, and
 * only once that Sandbox is controller-owned by the claim: case claim-ready-stale-generation), and both nonces echoed exactly (no lucky single
 * success). A Ready pod whose runtime is silent, hangs past the deadline or answers wrong stays `configured`, with
 * evidence saying which (case runtime-exec-starves-probe). Isolation (gVisor/Kata) is verified only by a kernel the runtime reports from inside
 * (isolation.ts). A probe that never gets Ready carries its pod's Warning events (pod-events.ts), and a runtime class
 * gets one `missing` line per node where pods under it got FailedCreatePodSandBox (case gvisor-runtimeclass-unschedulable). A template under a
 * RuntimeClass that cannot run a pod gets no probe object (workload/class-gate.ts). The objects are deleted by the
 * run's cleanup; an object whose create was refused is not tracked (../workload.ts).
 *
 * The steps live in workload/: facts (the recorders), runtime-config, class-gate, provision-claim / provision-sandbox,
 * sandbox-ready, runtime-use (commands, files, router), runtime-proof, conversion; handoff passes the probe sandbox to the
 * network enforcement test and the suspend-resume round trip (suspend-round-trip.ts), each a probe of its own.
 */
import type { CapabilityName } from '../../adapter/types.js';
import { familyConverts, isBetaFamily } from '../../model/releases.js';
import type { Evidence } from '../evidence.js';
import type { TemplatePlan, WarmPoolPlan } from '../plan.js';
import type { Probe, ProbeRun } from '../runner.js';
import { apiVersionOf, reads, type ProbeDeps } from './common.js';
import { isolationEvidence } from './isolation.js';
import { nodeFailureEvidence } from './pod-events.js';
import { unschedulableClass } from './workload/class-gate.js';
import { clientPathEvidence } from './workload/client-path.js';
import { conversionReadEvidence } from './workload/conversion.js';
import { allEvidence, workloadFacts, type WorkloadFacts } from './workload/facts.js';
import type { ProbeSandboxes } from './workload/handoff.js';
import { claimAndWait } from './workload/provision-claim.js';
import { sandboxAndWait } from './workload/provision-sandbox.js';
import type { Readiness } from './workload/readiness.js';
import { runtimeConfigEvidence } from './workload/runtime-config.js';
import { firstInstructionEvidence, runtimeMeasureEvidence } from './workload/runtime-measure.js';
import { executionEvidence, fileEvidence, routerEvidence } from './workload/runtime-use.js';
import { notReadyEvidence, readyEvidence } from './workload/sandbox-ready.js';

export function workloadProbe(
  deps: ProbeDeps,
  template: TemplatePlan,
  pool: WarmPoolPlan | undefined,
  after: readonly string[],
  sandboxes: ProbeSandboxes,
): Probe {
  const tcap = `template/${template.namespace}/${template.name}` as const;
  const covers: CapabilityName[] = [
    tcap,
    'runtime-exec',
    'runtime-files',
    'sandbox-api',
    'controller',
    'conversion',
    'router',
  ];
  if (pool) covers.push(`warm-pool/${pool.namespace}/${pool.name}`);
  if (isBetaFamily(deps.facts.family)) covers.push('extensions-api');
  if (template.runtimeClassName) covers.push(`runtime-class/${template.runtimeClassName}`);
  return {
    id: `workload/${template.namespace}/${template.name}`,
    after,
    covers,
    timeoutStep: 'verified',
    // 6 calls of the proof and its neighbours, 5 of the runtime measurement (runtime-measure.ts)
    deadlineMs: deps.plan.readyTimeoutMs + 11 * deps.plan.probeTimeoutMs + 15_000,
    run: (ctx) => runWorkload(deps, template, pool, ctx, sandboxes),
  };
}

async function runWorkload(
  deps: ProbeDeps,
  template: TemplatePlan,
  pool: WarmPoolPlan | undefined,
  ctx: ProbeRun,
  sandboxes: ProbeSandboxes,
): Promise<Evidence[]> {
  const f = workloadFacts(deps.facts.family, template, pool);
  const runtime = template.runtime;
  const speaks = runtimeConfigEvidence(f, template, deps.plan.transport);
  if (!speaks || runtime === 'custom') return allEvidence(f);
  if (await skippedForClass(deps, template, f, ctx)) return allEvidence(f);

  clientPoolEvidence(deps, template, pool, f, ctx);
  clientPathEvidence(deps.plan, template, f, (t) => ctx.note(t));
  const provisionedAt = Date.now();
  const readiness = await provision(deps, template, pool, f, ctx);
  if (!readiness.ready) {
    await notReadyEvidence(deps, template, f, readiness);
    return allEvidence(f);
  }
  const sb = await readyEvidence(deps, template, runtime, f, readiness);
  await firstInstructionEvidence(deps, f, sb, readiness, provisionedAt);

  const runtimeOk = await executionEvidence(deps, template, f, sb, ctx);
  if (runtimeOk) await runtimeMeasureEvidence(deps, template, f, sb);
  sandboxes.set(template.namespace, template.name, { sandbox: sb, runtimeOk });
  await fileEvidence(deps, template, f, sb);
  // Conversion round trip: the Sandbox read at v1alpha1 (served through the webhook on v0.5; v1.0 has no v1alpha1).
  if (familyConverts(deps.facts.family)) {
    const r = await reads(deps).at('v1alpha1').sandbox(template.namespace, sb.name);
    conversionReadEvidence(f.conv, `Sandbox ${template.namespace}/${sb.name}`, r);
  }
  await routerEvidence(deps, template, f, sb, runtimeOk);
  // Runtime class: the pod ran under it, on a matching node, and isolation shows from inside; and no sibling pod under
  // the class failed to get a sandbox on another node (the probe may have landed on the one node that works).
  if (f.rc && template.runtimeClassName) {
    await isolationEvidence(deps, f.rc, template.runtimeClassName, sb.pod, sb.target, runtimeOk);
    await nodeFailureEvidence(deps, f.rc, template, sb.target.pod);
  }
  return allEvidence(f);
}

/**
 * A declared client claims only from pools the environment declares: when it has none to claim from (or the template
 * has none and the verifier makes its own), that capacity is the verifier's, not the client's — a finding on runtime-exec.
 */
function clientPoolEvidence(
  deps: ProbeDeps,
  template: TemplatePlan,
  pool: WarmPoolPlan | undefined,
  f: WorkloadFacts,
  ctx: ProbeRun,
): void {
  for (const c of deps.plan.clients ?? []) {
    const usable = c.warmPools.filter((p) =>
      deps.plan.warmPools.some((w) => w.namespace === p.namespace && w.name === p.name),
    );
    if (usable.length > 0) continue;
    const why = `${c.sdk} ${c.version} (${c.mode}) claims from a SandboxWarmPool by name, but the environment declares none it names${pool === undefined ? `; the probe pool for template ${template.name} is the verifier's own` : ''}`;
    ctx.note(why);
    f.exec.add('verified', 'unknown', `template ${template.namespace}/${template.name}`, 'ClientPoolMissing', why);
  }
}

/** A class that cannot run a pod would only make the probe object wait out the ready timeout: create nothing, say why. */
async function skippedForClass(
  deps: ProbeDeps,
  template: TemplatePlan,
  f: WorkloadFacts,
  ctx: ProbeRun,
): Promise<boolean> {
  if (!f.rc || !template.runtimeClassName) return false;
  const blocked = await unschedulableClass(deps, template.runtimeClassName, ctx);
  if (blocked === undefined) return false;
  const why = `not tried: ${blocked.why}, so no probe sandbox from this template could start; none was created`;
  const subject = `template ${template.namespace}/${template.name}`;
  // `value` is the runtime-class probe's reason: why the class cannot run a pod.
  const seen = { field: `RuntimeClass/${template.runtimeClassName}`, value: blocked.reason };
  ctx.note(why);
  for (const x of [f.template, f.wp]) x?.add('verified', 'missing', subject, 'RuntimeClassUnusable', why, seen);
  for (const x of [f.exec, f.files, f.api, f.ctrl, f.ext, f.rc])
    x?.add('verified', 'unknown', subject, 'RuntimeClassUnusable', why, seen);
  return true;
}

/** On v0.5 a claim (the client path); on v0.4, which provisions no claims, a bare Sandbox from the template. */
function provision(
  deps: ProbeDeps,
  template: TemplatePlan,
  pool: WarmPoolPlan | undefined,
  f: WorkloadFacts,
  ctx: ProbeRun,
): Promise<Readiness> {
  if (isBetaFamily(deps.facts.family)) return claimAndWait(deps, template, pool, ctx);
  if (f.wp && pool)
    f.wp.add(
      'verified',
      'unknown',
      `warm pool ${pool.namespace}/${pool.name}`,
      'NoClaimsOnRelease',
      `release ${deps.facts.tag} is family v0.4: AgentPlane provisions no claims there (adapter createFromTemplate returns unsupported)`,
    );
  return sandboxAndWait(deps, template, apiVersionOf(deps.facts), ctx);
}
