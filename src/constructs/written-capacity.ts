/**
 * Capacity of the nodes a RuntimeClass declares (case kata-runtimeclass-pending): the pods of its pools (replicas +
 * claims, each with its template's requests and the class's overhead) must fit them. A misfit of the construct props
 * is refused at the RuntimeClass ({@link capacityRefusals}, a problem of the environment's check under every
 * synthesis path); a misfit that only the written objects show (a patch raised a pool's replicas or a template's
 * requests) is an output rule violation naming each patched ApiObject, so it can be acknowledged.
 */
import { CapacityError } from './bounds-errors.js';
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

/** One RuntimeClass with declared nodes and the requests of its pools' pods (overhead included), per pod. */
interface ClassPods {
  readonly rc: SandboxRuntimeClass & { readonly nodes: NonNullable<SandboxRuntimeClass['nodes']> };
  readonly node: Resources;
  /** From the construct props. */
  readonly declared: readonly Resources[];
  /** As written (escape hatches applied), each with the template it comes from. */
  readonly written: ReadonlyArray<{ readonly requests: Resources; readonly template: SandboxTemplate }>;
  /** The pools and templates a patch changed. */
  readonly patched: ReadonlySet<SandboxTemplate | SandboxWarmPool>;
}

function classPods(parts: CapacityParts): ClassPods[] {
  const out: ClassPods[] = [];
  for (const rc of parts.runtimeClasses) {
    if (rc.nodes === undefined) continue;
    const overhead = overheadOf(rc);
    const declared: Resources[] = [];
    const written: Array<{ requests: Resources; template: SandboxTemplate }> = [];
    const patched = new Set<SandboxTemplate | SandboxWarmPool>();
    for (const p of parts.warmPools.filter((x) => x.template.runtimeClass === rc)) {
      const claims = parts.claims.filter((c) => c.pool === p).length;
      const replicas = p.writtenReplicas();
      const requests = p.template.writtenResources().requests;
      if (replicas !== p.replicas) patched.add(p);
      const declaredRequests = p.template.resources.requests;
      if (requests.cpuMilli !== declaredRequests.cpuMilli || requests.memoryBytes !== declaredRequests.memoryBytes)
        patched.add(p.template);
      for (let i = 0; i < p.replicas + claims; i++) declared.push(add(declaredRequests, overhead));
      const pod = { requests: add(requests, overhead), template: p.template };
      for (let i = 0; i < replicas + claims; i++) written.push(pod);
    }
    const node = {
      cpuMilli: cpuMilli(rc.nodes.allocatable.cpu),
      memoryBytes: memoryBytes(rc.nodes.allocatable.memory),
    };
    out.push({ rc: rc as ClassPods['rc'], node, declared, written, patched });
  }
  return out;
}

const quantities = (r: Resources) => ({ cpu: formatCpu(r.cpuMilli), memory: formatMemory(r.memoryBytes) });

/**
 * The misfits of the construct props, one CapacityError per RuntimeClass at its construct path: `PodExceedsNode`
 * when one pod is larger than a declared node's allocatable, `NodesExhausted` when the pods need more nodes than
 * declared. Judged on the written objects (what the cluster gets), so a patch that makes the pods fit is accepted;
 * not acknowledgeable, since an acknowledgement covers what a patch broke ({@link capacityViolations}).
 */
export function capacityRefusals(parts: CapacityParts): CapacityError[] {
  const out: CapacityError[] = [];
  for (const { rc, node, declared, written } of classPods(parts)) {
    if (capacityMisfit(packNodes(declared, node), rc.nodes.count) === undefined) continue;
    const packed = packNodes(
      written.map((w) => w.requests),
      node,
    );
    const nodeText = `${rc.nodes.count} node(s) of ${rc.nodes.allocatable.cpu} cpu / ${rc.nodes.allocatable.memory} allocatable`;
    if ('tooBig' in packed) {
      const t = written.find((w) => w.requests === packed.tooBig)!.template;
      const template = `${t.namespace}/${t.name}`;
      const requests = quantities(packed.tooBig);
      out.push(
        new CapacityError(
          rc.node.path,
          'PodExceedsNode',
          `a pod of template ${template} requests ${requests.cpu} cpu / ${requests.memory} (RuntimeClass ${rc.name} overhead included), more than one of the ${nodeText} declared for RuntimeClass ${rc.name}: it would stay Pending`,
          'lower the template requests, or declare the real node size in the RuntimeClass nodes prop',
          { runtimeClass: rc.name, template, requests, nodesDeclared: rc.nodes.count },
        ),
      );
    } else if (packed.needed > rc.nodes.count) {
      const requests = quantities(written.reduce((a, w) => add(a, w.requests), ZERO));
      out.push(
        new CapacityError(
          rc.node.path,
          'NodesExhausted',
          `the pools of RuntimeClass ${rc.name} need ${written.length} pod(s) requesting ${requests.cpu} cpu / ${requests.memory} in all, which take ${packed.needed} node(s), but ${nodeText} are declared: some would stay Pending`,
          'lower pool replicas or template requests, or add nodes to the pool and declare them in the RuntimeClass nodes prop',
          { runtimeClass: rc.name, requests, nodesDeclared: rc.nodes.count, nodesNeeded: packed.needed },
        ),
      );
    }
  }
  return out;
}

/** The misfits only the written objects show, one violation per patched pool or template of the RuntimeClass. */
export function capacityViolations(parts: CapacityParts, objects: readonly RenderedObject[]): OutputRuleViolation[] {
  const out: OutputRuleViolation[] = [];
  for (const { rc, node, declared, written, patched } of classPods(parts)) {
    if (capacityMisfit(packNodes(declared, node), rc.nodes.count) !== undefined) continue; // refused: capacityRefusals
    const requests = written.map((w) => w.requests);
    const rule = capacityMisfit(packNodes(requests, node), rc.nodes.count);
    if (rule === undefined) continue;
    const total = requests.reduce((a, b) => add(a, b), ZERO);
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
