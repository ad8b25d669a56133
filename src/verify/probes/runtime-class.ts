/**
 * Probe of `runtime-class/<name>` (case gvisor-runtimeclass-unschedulable): discovered = the RuntimeClass exists; compatible = at least one Ready node
 * matches its `scheduling` (nodeSelector labels, and its tolerations cover the node's NoSchedule/NoExecute taints);
 * configured = a declared template sets `runtimeClassName` to it. `verified` comes from the workload probe: a pod ran
 * under it on a matching node AND the runtime answered with evidence of the isolating kernel (a kernel unlike the
 * node's plus a runtime marker, isolation.ts). FailedCreatePodSandBox events are reported per node by the workload probe.
 * A `missing` discovered or compatible step here makes the workload probe of every template using the class create
 * nothing (workload.ts `unschedulableClass`).
 * RuntimeClass admission merges `scheduling` into pods (`plugin/pkg/admission/runtimeclass/admission.go`, k8s 1.36).
 */
import type { NodeView, RuntimeClassView } from '../../adapter/kubernetes/views.js';
import type { Probe } from '../runner.js';
import { Facts, reads, shared, type ProbeDeps } from './common.js';

interface Toleration {
  key?: string;
  operator?: string;
  value?: string;
  effect?: string;
}
interface Taint {
  key?: string;
  value?: string;
  effect?: string;
}

function tolerates(tolerations: readonly Toleration[], taint: Taint): boolean {
  return tolerations.some((t) => {
    if (t.effect && t.effect !== taint.effect) return false;
    if (t.operator === 'Exists') return t.key === undefined || t.key === '' || t.key === taint.key;
    return t.key === taint.key && (t.value ?? '') === (taint.value ?? '');
  });
}

/** Per node: whether it is Ready and matches the class's scheduling, with the reason when not. Pure. */
export function nodesFor(
  runtimeClass: RuntimeClassView,
  nodes: readonly NodeView[],
): Array<{ node: string; fits: boolean; reason: string }> {
  const { nodeSelector: selector, tolerations } = runtimeClass;
  return nodes.map((n) => {
    const { name, labels } = n.meta;
    if (!n.ready) return { node: name, fits: false, reason: 'node not Ready' };
    const unmet = Object.entries(selector).filter(([k, v]) => labels[k] !== v);
    if (unmet.length > 0)
      return { node: name, fits: false, reason: `lacks label ${unmet.map(([k, v]) => `${k}=${v}`).join(', ')}` };
    const taints = n.taints.filter((t) => t.effect === 'NoSchedule' || t.effect === 'NoExecute');
    const blocking = taints.filter((t) => !tolerates(tolerations, t));
    if (blocking.length > 0)
      return {
        node: name,
        fits: false,
        reason: `taint ${blocking.map((t) => `${t.key}${t.value ? `=${t.value}` : ''}:${t.effect}`).join(', ')} not tolerated`,
      };
    return { node: name, fits: true, reason: 'Ready and matches' };
  });
}

export function runtimeClassProbe(deps: ProbeDeps, name: string): Probe {
  const capability = `runtime-class/${name}` as const;
  return {
    id: capability,
    after: [],
    covers: [capability],
    timeoutStep: 'discovered',
    deadlineMs: 15_000,
    async run() {
      const f = new Facts(capability);
      const subject = `RuntimeClass ${name}`;
      const read = reads(deps);
      const rc = await shared(deps).runtimeClass(name);
      if (rc.kind !== 'ok') return f.failedCall('discovered', subject, rc).list;
      if (rc.value === undefined)
        return f.add(
          'discovered',
          'missing',
          subject,
          'RuntimeClassNotFound',
          `RuntimeClass ${name} does not exist: pods naming it are rejected at admission`,
        ).list;
      const { handler } = rc.value;
      f.proven('discovered', subject, 'RuntimeClassFound', `RuntimeClass ${name} exists (handler ${handler})`, {
        field: 'handler',
        value: handler,
      });
      const nodes = await read.nodes();
      if (nodes.kind !== 'ok') f.failedCall('compatible', 'nodes', nodes);
      else {
        const fits = nodesFor(rc.value, nodes.value);
        const good = fits.filter((x) => x.fits).map((x) => x.node);
        if (good.length > 0)
          f.proven(
            'compatible',
            subject,
            'NodesMatchRuntimeClass',
            `${good.length} Ready node(s) match its scheduling: ${good.join(', ')}`,
            { field: 'scheduling', value: good.join(',') },
          );
        else {
          const why = fits.map((x) => `${x.node} ${x.reason}`).join('; ') || 'no nodes';
          f.add(
            'compatible',
            'missing',
            subject,
            'NoNodeMatchesRuntimeClass',
            `no Ready node matches its scheduling: ${why}`,
            { field: 'scheduling', value: why },
          );
        }
      }
      const users = deps.plan.templates
        .filter((t) => t.runtimeClassName === name)
        .map((t) => `${t.namespace}/${t.name}`);
      if (users.length > 0)
        f.proven(
          'configured',
          subject,
          'TemplateUsesRuntimeClass',
          `template(s) ${users.join(', ')} set runtimeClassName ${name}`,
          { field: 'spec.podTemplate.spec.runtimeClassName' },
        );
      else
        f.add(
          'configured',
          'missing',
          subject,
          'NoTemplateUsesRuntimeClass',
          `no declared template sets runtimeClassName ${name}`,
        );
      return f.list;
    },
  };
}
