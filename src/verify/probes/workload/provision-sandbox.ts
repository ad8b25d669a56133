/**
 * The v0.4 probe object: a bare labelled Sandbox with the template's pod template (v0.4 provisions no claims through
 * the adapter), waited for with one watch until Ready at its current generation, terminal, a permanent
 * FailedCreatePodSandBox of its pod (pod-fault.ts), or the ready timeout.
 */
import { formatMs } from '../../evidence.js';
import type { TemplatePlan } from '../../plan.js';
import type { ProbeRun } from '../../runner.js';
import { reads, ref, type ProbeDeps } from '../common.js';
import { describePodFault, watchPodFaults } from '../pod-fault.js';
import { reconnected, settled, type Readiness } from './readiness.js';

export async function sandboxAndWait(
  deps: ProbeDeps,
  template: TemplatePlan,
  version: string,
  ctx: ProbeRun,
  prefix = 't',
): Promise<Readiness> {
  const started = Date.now();
  const read = reads(deps).at(version);
  const tpl = await read.template(template.namespace, template.name);
  if (tpl.kind !== 'ok' || tpl.value === undefined) {
    const why = `cannot read SandboxTemplate ${template.namespace}/${template.name} to build the probe Sandbox${tpl.kind === 'failed' ? `: ${tpl.error.message}` : ''}`;
    return { ready: false, reason: 'ProbeTemplateUnreadable', why, waitedMs: Date.now() - started };
  }
  const sref = ref('Sandbox', version, template.namespace);
  const name = deps.workload.name(`${prefix}-${template.name}`);
  deps.workload.track(sref, 'Sandbox', name);
  ctx.note(`creating probe Sandbox ${template.namespace}/${name}`);
  const created = await read.createSandbox(template.namespace, {
    name,
    labels: deps.workload.labels(),
    annotations: { 'agentplane.dev/verify-template': template.name },
    template: tpl.value,
  });
  deps.workload.created(sref, name, created);
  if (created.kind !== 'ok') {
    return {
      ready: false,
      reason: 'ProbeCreateRefused',
      why: `could not create probe Sandbox ${name}: ${created.kind === 'failed' ? created.error.message : created.kind}`,
      waitedMs: Date.now() - started,
    };
  }
  let last = 'no status yet';
  let pod = name;
  const faults = watchPodFaults(deps, template.namespace, () => [pod], ctx.signal);
  const w = await read.waitSandbox(
    template.namespace,
    name,
    (sb) => {
      if (!sb) return false;
      pod = sb.podName;
      last = sb.phase.message;
      return settled(sb.phase.phase);
    },
    { timeoutMs: deps.plan.readyTimeoutMs, signal: faults.signal, progress: ctx.note },
  );
  const fault = await faults.stop();
  if (fault && w.kind !== 'matched')
    return {
      ready: false,
      reason: 'ProbePodCannotStart',
      why: `probe Sandbox ${name}: ${describePodFault(template.namespace, fault)}`,
      ...(w.kind === 'timeout' && w.last ? { sandbox: w.last } : {}),
      waitedMs: w.waitedMs,
    };
  if (w.kind === 'matched') {
    const sandbox = w.view;
    const p = sandbox.phase;
    if (p.phase === 'Ready')
      return { ready: true, why: `${p.message}${reconnected(w)}`, sandbox, waitedMs: w.waitedMs };
    return {
      ready: false,
      reason: 'ProbeSandboxEnded',
      why: `probe Sandbox ${name} ended ${p.phase}: ${p.message}`,
      sandbox,
      waitedMs: w.waitedMs,
    };
  }
  if (w.kind === 'failed')
    return {
      ready: false,
      reason: 'ProbeWatchFailed',
      why: `watching probe Sandbox ${name} failed: ${w.error.message}`,
      waitedMs: w.waitedMs,
    };
  const limit = ctx.signal.aborted
    ? 'interrupted before it was Ready'
    : `not Ready within ${formatMs(deps.plan.readyTimeoutMs)}`;
  return {
    ready: false,
    reason: ctx.signal.aborted ? 'ProbeInterrupted' : 'ProbeNotReadyInTime',
    why: `probe Sandbox ${name} ${limit} (last: ${last})`,
    ...(w.last ? { sandbox: w.last } : {}),
    waitedMs: w.waitedMs,
  };
}
