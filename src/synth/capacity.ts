/**
 * What an environment needs from its nodes, per RuntimeClass (case kata-runtimeclass-pending): each template's pod
 * (requests and limits + the class's overhead) and each pool's pods (replicas + the claims that take members from it,
 * since the pool replenishes each claimed member) — and, where the RuntimeClass declares its nodes, how many nodes the
 * pods take (first-fit decreasing by requests). The environment's own check refuses a pod no node can hold or pods the
 * declared nodes cannot (constructs/written-capacity.ts); these are the figures.
 */
import type { AgentEnvironment } from '../constructs/index.js';
import { overheadOf, packNodes } from '../constructs/written-capacity.js';
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
 * The capacity need of every RuntimeClass of `env` (sorted by name; templates and pools by namespace/name), as
 * written (escape hatches applied). With declared nodes, `needed` counts the nodes the pods that fit one take.
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
      const fits = podList.filter((p) => p.cpuMilli <= node.cpuMilli && p.memoryBytes <= node.memoryBytes);
      nodes = {
        declared: rc.nodes.count,
        allocatable: { ...rc.nodes.allocatable },
        // a pod larger than any node never schedules (refused unless a patch made it and that is acknowledged)
        needed: (packNodes(fits, node) as { needed: number }).needed,
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
