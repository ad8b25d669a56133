/**
 * The v0.4 probe object: a bare labelled Sandbox with the template's pod template (v0.4 provisions no claims through
 * the adapter), waited for with one watch until Ready at its current generation, terminal, or the ready timeout.
 */
import type { Obj } from '../../../adapter/kubernetes/cluster.js';
import { sandboxView, templateView } from '../../../adapter/kubernetes/views.js';
import { formatMs } from '../../evidence.js';
import type { TemplatePlan } from '../../plan.js';
import type { ProbeRun } from '../../runner.js';
import { ref, type ProbeDeps } from '../common.js';
import { reconnected, settled, type Readiness } from './readiness.js';

export async function sandboxAndWait(
  deps: ProbeDeps,
  template: TemplatePlan,
  version: string,
  ctx: ProbeRun,
): Promise<Readiness> {
  const started = Date.now();
  const tpl = await deps.cluster.getCustom(ref('SandboxTemplate', version, template.namespace), template.name);
  if (tpl.kind !== 'ok' || tpl.value === undefined) {
    const why = `cannot read SandboxTemplate ${template.namespace}/${template.name} to build the probe Sandbox${tpl.kind === 'failed' ? `: ${tpl.error.message}` : ''}`;
    return { ready: false, reason: 'ProbeTemplateUnreadable', why, waitedMs: Date.now() - started };
  }
  const sref = ref('Sandbox', version, template.namespace);
  const name = deps.workload.name(`t-${template.name}`);
  deps.workload.track(sref, 'Sandbox', name);
  ctx.note(`creating probe Sandbox ${template.namespace}/${name}`);
  const created = await deps.cluster.createCustom(sref, probeSandbox(deps, template, version, name, tpl.value));
  deps.workload.created(sref, name, created);
  if (created.kind !== 'ok') {
    return {
      ready: false,
      reason: 'ProbeCreateRefused',
      why: `could not create probe Sandbox ${name}: ${created.kind === 'failed' ? created.error.message : created.kind}`,
      waitedMs: Date.now() - started,
    };
  }
  const family = deps.facts.family;
  let last = 'no status yet';
  const w = await deps.cluster.waitFor(
    `/apis/agents.x-k8s.io/${version}/namespaces/${template.namespace}/sandboxes`,
    name,
    () => deps.cluster.getCustom(sref, name),
    (o) => {
      if (!o) return false;
      const p = sandboxView(o, family).phase;
      last = p.reason;
      return settled(p.phase);
    },
    { timeoutMs: deps.plan.readyTimeoutMs, signal: ctx.signal, progress: ctx.note },
  );
  if (w.kind === 'matched') {
    const sandbox = sandboxView(w.obj, family);
    const p = sandbox.phase;
    if (p.phase === 'Ready') return { ready: true, why: `${p.reason}${reconnected(w)}`, sandbox, waitedMs: w.waitedMs };
    return {
      ready: false,
      reason: 'ProbeSandboxEnded',
      why: `probe Sandbox ${name} ended ${p.phase}: ${p.reason}`,
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
    ...(w.last ? { sandbox: sandboxView(w.last, family) } : {}),
    waitedMs: w.waitedMs,
  };
}

/** The probe Sandbox body: the template's pod template, with the run's labels added to the object and its pod. */
function probeSandbox(deps: ProbeDeps, template: TemplatePlan, version: string, name: string, tpl: Obj): Obj {
  const t = templateView(tpl);
  const labels = deps.workload.labels();
  return {
    apiVersion: `agents.x-k8s.io/${version}`,
    kind: 'Sandbox',
    metadata: {
      name,
      namespace: template.namespace,
      labels,
      annotations: { 'agentplane.dev/verify-template': template.name },
    } as Obj['metadata'],
    spec: {
      podTemplate: {
        metadata: {
          labels: { ...t.podLabels, ...labels },
          ...(t.podAnnotations ? { annotations: t.podAnnotations } : {}),
        },
        spec: t.podSpec,
      },
    },
  };
}
