/**
 * What an environment needs from its nodes, per RuntimeClass (case kata-runtimeclass-pending): each template's pod
 * (requests and limits + the class's overhead) and each pool's pods (replicas + the claims that take members from it,
 * since the pool replenishes each claimed member) — and, where the RuntimeClass declares its nodes, how many nodes the
 * pods take (first-fit decreasing by requests), refusing a pod no node can hold or pods the declared nodes cannot.
 */
import { CapacityError, type AgentEnvironment } from '../constructs/index.js';
import { capacityMisfit, overheadOf, packNodes } from '../constructs/written-capacity.js';
import {
  add,
  cpuMilli,
  formatCpu,
  formatMemory,
  memoryBytes,
  times,
  ZERO,
  type Resources,
} from '../constructs/resources.js';

/** Requests and limits as quantities. */
export interface ResourceFigures {
  readonly requests: { readonly cpu: string; readonly memory: string };
  readonly limits: { readonly cpu: string; readonly memory: string };
}

/** The need of one RuntimeClass. */
export interface RuntimeClassCapacity {
  readonly runtimeClass: string;
  readonly overhead: { readonly cpu: string; readonly memory: string };
  readonly overheadSource: string;
  /** One pod of each template (overhead included). */
  readonly templates: ReadonlyArray<{ readonly template: string } & ResourceFigures>;
  /** Each pool: pods = replicas + claims, need = pod × pods. */
  readonly pools: ReadonlyArray<
    {
      readonly pool: string;
      readonly template: string;
      readonly replicas: number;
      readonly claims: number;
      readonly pods: number;
    } & ResourceFigures
  >;
  /** Sum of the pools. */
  readonly total: { readonly pods: number } & ResourceFigures;
  /** With declared nodes: how many there are and how many the pods take. */
  readonly nodes?: {
    readonly declared: number;
    readonly allocatable: { readonly cpu: string; readonly memory: string };
    readonly needed: number;
  };
}

function figures(requests: Resources, limits: Resources): ResourceFigures {
  return {
    requests: { cpu: formatCpu(requests.cpuMilli), memory: formatMemory(requests.memoryBytes) },
    limits: { cpu: formatCpu(limits.cpuMilli), memory: formatMemory(limits.memoryBytes) },
  };
}

/**
 * The capacity need of every RuntimeClass of `env` (sorted by name; templates and pools by namespace/name).
 * @throws CapacityError `PodExceedsNode` when one pod is larger than a declared node's allocatable, `NodesExhausted`
 *   when the pods need more nodes than declared, unless the environment acknowledges that rule for one of the class's
 *   pools or templates (a patch raised them; the environment's check names it, written-capacity.ts).
 */
export function capacityOf(env: AgentEnvironment): RuntimeClassCapacity[] {
  const key = (o: { namespace: string; name: string }): string => `${o.namespace}/${o.name}`;
  const out: RuntimeClassCapacity[] = [];
  for (const rc of [...env.runtimeClasses].sort((a, b) => (a.name < b.name ? -1 : 1))) {
    const overhead = overheadOf(rc);
    const templates = env.templates.filter((t) => t.runtimeClass === rc).sort((a, b) => (key(a) < key(b) ? -1 : 1));
    // Resources and replicas as written (escape hatches applied), so the check is on what the cluster gets.
    const perPod = new Map(
      templates.map((t) => {
        const written = t.writtenResources();
        return [t, { requests: add(written.requests, overhead), limits: add(written.limits, overhead) }];
      }),
    );
    const pools = env.warmPools
      .filter((p) => p.template.runtimeClass === rc)
      .sort((a, b) => (key(a) < key(b) ? -1 : 1));
    const claims = env.claims;
    const podList: Resources[] = [];
    let total = { pods: 0, requests: ZERO, limits: ZERO };
    const poolRows = pools.map((p) => {
      const pod = perPod.get(p.template)!;
      const claimCount = claims.filter((c) => c.pool === p).length;
      const replicas = p.writtenReplicas();
      const pods = replicas + claimCount;
      for (let i = 0; i < pods; i++) podList.push(pod.requests);
      total = {
        pods: total.pods + pods,
        requests: add(total.requests, times(pod.requests, pods)),
        limits: add(total.limits, times(pod.limits, pods)),
      };
      return {
        pool: key(p),
        template: key(p.template),
        replicas,
        claims: claimCount,
        pods,
        ...figures(times(pod.requests, pods), times(pod.limits, pods)),
      };
    });
    let nodes: RuntimeClassCapacity['nodes'];
    if (rc.nodes !== undefined) {
      const node = {
        cpuMilli: cpuMilli(rc.nodes.allocatable.cpu),
        memoryBytes: memoryBytes(rc.nodes.allocatable.memory),
      };
      const packed = packNodes(podList, node);
      const nodeText = `${rc.nodes.count} node(s) of ${rc.nodes.allocatable.cpu} cpu / ${rc.nodes.allocatable.memory} allocatable`;
      const misfit = capacityMisfit(packed, rc.nodes.count);
      const acknowledged =
        misfit !== undefined &&
        env.acknowledgements.some(
          (a) =>
            a.rule === misfit &&
            [...templates, ...pools].some(
              (c) => c.apiObject.node.path === a.path || c.apiObject.node.path.startsWith(`${a.path}/`),
            ),
        );
      if ('tooBig' in packed && !acknowledged) {
        const t = templates.find((x) => perPod.get(x)!.requests === packed.tooBig)!;
        throw new CapacityError(
          rc.node.path,
          'PodExceedsNode',
          `a pod of template ${key(t)} requests ${formatCpu(packed.tooBig.cpuMilli)} cpu / ${formatMemory(packed.tooBig.memoryBytes)} (RuntimeClass ${rc.name} overhead included), more than one of the ${nodeText} declared for RuntimeClass ${rc.name}: it would stay Pending`,
          'lower the template requests, or declare the real node size in the RuntimeClass nodes prop',
          {
            runtimeClass: rc.name,
            template: key(t),
            requests: { cpu: formatCpu(packed.tooBig.cpuMilli), memory: formatMemory(packed.tooBig.memoryBytes) },
            nodesDeclared: rc.nodes.count,
          },
        );
      }
      if ('needed' in packed && packed.needed > rc.nodes.count && !acknowledged) {
        throw new CapacityError(
          rc.node.path,
          'NodesExhausted',
          `the pools of RuntimeClass ${rc.name} need ${total.pods} pod(s) requesting ${formatCpu(total.requests.cpuMilli)} cpu / ${formatMemory(total.requests.memoryBytes)} in all, which take ${packed.needed} node(s), but ${nodeText} are declared: some would stay Pending`,
          'lower pool replicas or template requests, or add nodes to the pool and declare them in the RuntimeClass nodes prop',
          {
            runtimeClass: rc.name,
            requests: { cpu: formatCpu(total.requests.cpuMilli), memory: formatMemory(total.requests.memoryBytes) },
            nodesDeclared: rc.nodes.count,
            nodesNeeded: packed.needed,
          },
        );
      }
      nodes = {
        declared: rc.nodes.count,
        allocatable: { ...rc.nodes.allocatable },
        // an acknowledged pod larger than any node never schedules: the nodes the others take
        needed:
          'needed' in packed
            ? packed.needed
            : (
                packNodes(
                  podList.filter((p) => p.cpuMilli <= node.cpuMilli && p.memoryBytes <= node.memoryBytes),
                  node,
                ) as { needed: number }
              ).needed,
      };
    }
    out.push({
      runtimeClass: rc.name,
      overhead: { cpu: formatCpu(overhead.cpuMilli), memory: formatMemory(overhead.memoryBytes) },
      overheadSource: rc.overheadSource,
      templates: templates.map((t) => ({
        template: key(t),
        ...figures(perPod.get(t)!.requests, perPod.get(t)!.limits),
      })),
      pools: poolRows,
      total: { pods: total.pods, ...figures(total.requests, total.limits) },
      ...(nodes !== undefined ? { nodes } : {}),
    });
  }
  return out;
}

/** One line per RuntimeClass for people, e.g. `capacity: RuntimeClass kata-qemu (overhead 250m/160Mi): pool sandboxes/p 3 pod(s) requests 2250m/...`. */
export function capacityNotes(capacity: readonly RuntimeClassCapacity[]): string[] {
  return capacity.map((c) => {
    const pools = c.pools.map(
      (p) =>
        `pool ${p.pool} ${p.pods} pod(s) requests ${p.requests.cpu}/${p.requests.memory} limits ${p.limits.cpu}/${p.limits.memory}`,
    );
    const tpl = c.templates.map(
      (t) =>
        `template ${t.template} per pod requests ${t.requests.cpu}/${t.requests.memory} limits ${t.limits.cpu}/${t.limits.memory}`,
    );
    const nodes =
      c.nodes !== undefined
        ? `; nodes: ${c.nodes.needed} of ${c.nodes.declared} declared`
        : '; nodes: undeclared (no fit check)';
    return `capacity: RuntimeClass ${c.runtimeClass} (overhead ${c.overhead.cpu} cpu/${c.overhead.memory}): ${[...tpl, ...pools].join('; ') || 'no templates'}; total ${c.total.pods} pod(s) requests ${c.total.requests.cpu}/${c.total.requests.memory}${nodes}`;
  });
}
