/**
 * kwok-managed Node objects for the test cluster. kwok (`--manage-nodes-with-annotation-selector=kwok.x-k8s.io/node=fake`)
 * fills status, conditions and heartbeats; `spec.podCIDR` decides pod IPs (`pkg/kwok/controllers/pod_controller.go@v0.8.0`),
 * so every node gets `127.<podNet>.<index>.0/24` and pod IPs stay in 127.0.0.0/8.
 */

/** A node flag of `cluster:up` that cannot be used: which flag and the entry given. */
export class NodeFlagError extends Error {
  readonly reason = 'NodeFlagInvalid';
  constructor(
    readonly flag: 'label' | 'taint' | 'index' | 'podNet',
    readonly value: string,
    message: string,
  ) {
    super(message);
    this.name = 'NodeFlagError';
  }
}
import type { KubeObject } from './kube.js';

export interface Taint {
  readonly key: string;
  readonly value?: string;
  readonly effect: 'NoSchedule' | 'PreferNoSchedule' | 'NoExecute';
}

/** Parses `k=v,k2=v2` into a label map. @throws Error on an entry without `=`. */
export function parseLabels(spec: string): Record<string, string> {
  const out: Record<string, string> = {};
  for (const part of spec
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)) {
    const eq = part.indexOf('=');
    if (eq <= 0)
      throw new NodeFlagError(
        'label',
        part,
        `node label "${part}" is not key=value (e.g. sandbox.gke.io/runtime=gvisor)`,
      );
    out[part.slice(0, eq)] = part.slice(eq + 1);
  }
  return out;
}

/** Parses `k=v:Effect,k2:Effect` into taints. @throws Error on a malformed entry or unknown effect. */
export function parseTaints(spec: string): Taint[] {
  return spec
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean)
    .map((part) => {
      const m = /^([^=:]+)(?:=([^:]*))?:(NoSchedule|PreferNoSchedule|NoExecute)$/.exec(part);
      if (!m)
        throw new NodeFlagError(
          'taint',
          part,
          `node taint "${part}" is not key[=value]:NoSchedule|PreferNoSchedule|NoExecute`,
        );
      return m[2] === undefined
        ? { key: m[1]!, effect: m[3] as Taint['effect'] }
        : { key: m[1]!, value: m[2], effect: m[3] as Taint['effect'] };
    });
}

/**
 * A kwok Node named `name` with podCIDR `127.<podNet>.<index>.0/24` (index 0..254, podNet 1..254, default 10 — the
 * cluster's `podNet` in cluster.json), extra labels and taints. Nodes up.sh makes use indexes 0..N-1; tests adding
 * nodes should use indexes from 100 up.
 */
export function kwokNode(
  name: string,
  index: number,
  labels: Record<string, string> = {},
  taints: readonly Taint[] = [],
  podNet = 10,
): KubeObject {
  if (!Number.isInteger(index) || index < 0 || index > 254)
    throw new NodeFlagError('index', String(index), `node index ${index} out of range 0..254`);
  if (!Number.isInteger(podNet) || podNet < 1 || podNet > 254)
    throw new NodeFlagError('podNet', String(podNet), `podNet ${podNet} out of range 1..254`);
  return {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: {
      name,
      annotations: { 'kwok.x-k8s.io/node': 'fake' },
      labels: { 'kubernetes.io/hostname': name, type: 'kwok', ...labels },
    },
    spec: {
      podCIDR: `127.${podNet}.${index}.0/24`,
      podCIDRs: [`127.${podNet}.${index}.0/24`],
      taints: taints.map((t) => ({ ...t })),
    },
  } as KubeObject;
}
