/**
 * Reads the probes of one run share, so N templates do not cost N identical requests:
 * - a RuntimeClass, read once per run: neither a probe nor the controller writes one;
 * - a CustomResourceDefinition, read once per run for the same reason: the install probe and the tuple read the same
 *   four at the same moment (a Sandbox CRD is over 600 KiB);
 * - the NetworkPolicies of a namespace as the template probes see them: they start together, so one read serves them
 *   all. Later probes (router, network) read again, since the controller may create a Managed template's policy
 *   meanwhile.
 * A failed read is not kept: the next probe that asks reads again.
 */
import type { Result } from '../../adapter/types.js';
import type { Cluster } from '../../adapter/kubernetes/cluster.js';
import type { ClusterReads } from '../../adapter/kubernetes/reads.js';
import type { CrdView, NetworkPolicyView, RuntimeClassView } from '../../adapter/kubernetes/views.js';

export class SharedReads {
  private readonly kept = new Map<string, Promise<Result<unknown>>>();

  constructor(private readonly read: ClusterReads) {}

  runtimeClass(name: string): Promise<Result<RuntimeClassView | undefined>> {
    return this.once(`RuntimeClass/${name}`, () => this.read.runtimeClass(name));
  }

  crd(name: string): Promise<Result<CrdView | undefined>> {
    return this.once(`CustomResourceDefinition/${name}`, () => this.read.crd(name));
  }

  templateNetworkPolicies(namespace: string): Promise<Result<NetworkPolicyView[]>> {
    return this.once(`NetworkPolicies/${namespace}`, () => this.read.networkPolicies(namespace));
  }

  private once<T>(key: string, fn: () => Promise<Result<T>>): Promise<Result<T>> {
    const kept = this.kept.get(key) as Promise<Result<T>> | undefined;
    if (kept) return kept;
    const p = fn().then((r) => {
      if (r.kind !== 'ok') this.kept.delete(key);
      return r;
    });
    this.kept.set(key, p);
    return p;
  }
}

/** One per run: a run has its own Cluster (runVerify makes it). */
const perRun = new WeakMap<Cluster, SharedReads>();

export function sharedReadsOf(cluster: Cluster, read: () => ClusterReads): SharedReads {
  let s = perRun.get(cluster);
  if (!s) perRun.set(cluster, (s = new SharedReads(read())));
  return s;
}
