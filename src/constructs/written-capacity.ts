/**
 * Capacity checked on the written objects (case kata-runtimeclass-pending): where a RuntimeClass declares its nodes,
 * the pods of its pools (replicas + claims, each with its template's requests and the class's overhead) must fit them.
 * Synthesis refuses a misfit of the construct props at the RuntimeClass (synth/capacity.ts); a misfit that only the
 * written objects show (a patch raised a pool's replicas or a template's requests) is an output rule violation naming
 * each patched ApiObject, so it can be acknowledged.
 */
import { add, cpuMilli, formatCpu, formatMemory, memoryBytes, ZERO, type Resources } from './resources.js';
import type { SandboxClaim } from './claim.js';
import { objectIdentity } from './output-checks.js';
import type { RenderedObject } from './render.js';
import type { SandboxRuntimeClass } from './runtime-class.js';
import type { SandboxTemplate } from './template.js';
import type { SandboxWarmPool } from './warm-pool.js';
import type { OutputRuleViolation } from './written-rules.js';

/** Nodes first-fit decreasing needs for `pods` (requests), or the first pod no empty node holds. */
export function packNodes(pods: readonly Resources[], node: Resources): { needed: number } | { tooBig: Resources } {
  const free: Resources[] = [];
  const sorted = [...pods].sort((a, b) => b.cpuMilli - a.cpuMilli || b.memoryBytes - a.memoryBytes);
  for (const pod of sorted) {
    if (pod.cpuMilli > node.cpuMilli || pod.memoryBytes > node.memoryBytes) return { tooBig: pod };
    const slot = free.findIndex((f) => f.cpuMilli >= pod.cpuMilli && f.memoryBytes >= pod.memoryBytes);
    if (slot >= 0)
      free[slot] = {
        cpuMilli: free[slot]!.cpuMilli - pod.cpuMilli,
        memoryBytes: free[slot]!.memoryBytes - pod.memoryBytes,
      };
    else free.push({ cpuMilli: node.cpuMilli - pod.cpuMilli, memoryBytes: node.memoryBytes - pod.memoryBytes });
  }
  return { needed: free.length };
}

/** The rule a packing breaks on `count` nodes, or `undefined` when the pods fit. */
export function capacityMisfit(
  packed: { needed: number } | { tooBig: Resources },
  count: number,
): 'PodExceedsNode' | 'NodesExhausted' | undefined {
  if ('tooBig' in packed) return 'PodExceedsNode';
  return packed.needed > count ? 'NodesExhausted' : undefined;
}

/** The parts of an environment the check reads. */
export interface CapacityParts {
  readonly runtimeClasses: readonly SandboxRuntimeClass[];
  readonly warmPools: readonly SandboxWarmPool[];
  readonly claims: readonly SandboxClaim[];
}

/** The class's overhead as resources. */
export function overheadOf(rc: SandboxRuntimeClass): Resources {
  return {
    cpuMilli: rc.overhead?.cpu !== undefined ? cpuMilli(rc.overhead.cpu) : 0,
    memoryBytes: rc.overhead?.memory !== undefined ? memoryBytes(rc.overhead.memory) : 0,
  };
}

/** The misfits only the written objects show, one violation per patched pool or template of the RuntimeClass. */
export function capacityViolations(parts: CapacityParts, objects: readonly RenderedObject[]): OutputRuleViolation[] {
  const out: OutputRuleViolation[] = [];
  for (const rc of parts.runtimeClasses) {
    if (rc.nodes === undefined) continue;
    const overhead = overheadOf(rc);
    const node = {
      cpuMilli: cpuMilli(rc.nodes.allocatable.cpu),
      memoryBytes: memoryBytes(rc.nodes.allocatable.memory),
    };
    const pools = parts.warmPools.filter((p) => p.template.runtimeClass === rc);
    const declared: Resources[] = [];
    const written: Resources[] = [];
    const patched = new Set<SandboxTemplate | SandboxWarmPool>();
    for (const p of pools) {
      const claims = parts.claims.filter((c) => c.pool === p).length;
      const replicas = p.writtenReplicas();
      const requests = p.template.writtenResources().requests;
      if (replicas !== p.replicas) patched.add(p);
      const declaredRequests = p.template.resources.requests;
      if (requests.cpuMilli !== declaredRequests.cpuMilli || requests.memoryBytes !== declaredRequests.memoryBytes)
        patched.add(p.template);
      for (let i = 0; i < p.replicas + claims; i++) declared.push(add(p.template.resources.requests, overhead));
      for (let i = 0; i < replicas + claims; i++) written.push(add(requests, overhead));
    }
    if (capacityMisfit(packNodes(declared, node), rc.nodes.count) !== undefined) continue; // refused from the props
    const rule = capacityMisfit(packNodes(written, node), rc.nodes.count);
    if (rule === undefined) continue;
    const total = written.reduce((a, b) => add(a, b), ZERO);
    for (const c of patched) {
      const item = objects.find((o) => o.constructPath === c.apiObject.node.path);
      if (item === undefined) continue;
      const object = objectIdentity(item);
      const isPool = object.kind === 'SandboxWarmPool';
      out.push({
        rule,
        path: item.constructPath,
        object,
        field: isPool ? 'spec.replicas' : 'spec.podTemplate.spec.containers',
        ...(isPool ? { value: (c as SandboxWarmPool).writtenReplicas() } : {}),
        message: `${object.kind} ${object.namespace}/${object.name}: as written, the pods of RuntimeClass ${rc.name} (${written.length} requesting ${formatCpu(total.cpuMilli)} cpu / ${formatMemory(total.memoryBytes)}, overhead included) ${rule === 'PodExceedsNode' ? 'hold one larger than a declared node' : `need more than the ${rc.nodes.count} node(s) declared`}: some would stay Pending`,
      });
    }
  }
  return out;
}
