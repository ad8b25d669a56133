/**
 * The cluster reads the verifier and CLI make, answered as typed views ({@link ./views.ts}) so no layer above the
 * adapter sees the objects' wire shape. A thin layer over {@link Cluster}: same Results, same classification.
 */
import { FAMILY_VERSION, type SandboxKind } from '../../model/releases.js';
import { gvrAt } from '../../model/resources.js';
import type { ReleaseFamily } from '../../releases/types.js';
import type { Result } from '../types.js';
import type { Cluster, CustomRef, Obj } from './cluster.js';
import {
  claimView,
  crdView,
  deploymentView,
  eventView,
  metaOf,
  nodeView,
  podView,
  sandboxView,
  templateView,
  warmPoolView,
  type ClaimView,
  type CrdView,
  type DeploymentView,
  type EventView,
  type NodeView,
  type ObjectMeta,
  type PodView,
  type SandboxView,
  type TemplateView,
  type WarmPoolView,
} from './views.js';

/** `family` picks the served version of the agent-sandbox kinds; reads of core objects and CRDs do not need it. */
export class ClusterReads {
  constructor(
    readonly cluster: Cluster,
    readonly family?: ReleaseFamily,
  ) {}

  crd(name: string): Promise<Result<CrdView | undefined>> {
    return one(this.cluster.crd(name), crdView);
  }

  template(namespace: string, name: string): Promise<Result<TemplateView | undefined>> {
    return one(this.cluster.getCustom(this.ref('SandboxTemplate', namespace), name), templateView);
  }

  warmPool(namespace: string, name: string): Promise<Result<WarmPoolView | undefined>> {
    return one(this.cluster.getCustom(this.ref('SandboxWarmPool', namespace), name), warmPoolView);
  }

  sandboxes(namespace: string): Promise<Result<SandboxView[]>> {
    return many(this.cluster.listCustom(this.ref('Sandbox', namespace)), (o) => sandboxView(o, this.family!));
  }

  /** Claims, each judged without its Sandbox (for what they name, not for their phase). */
  claims(namespace: string): Promise<Result<ClaimView[]>> {
    return many(this.cluster.listCustom(this.ref('SandboxClaim', namespace)), (o) => claimView(o, this.family!));
  }

  /** NetworkPolicies by identity and owners (the verifier checks who owns a policy, never its rules). */
  networkPolicies(namespace: string): Promise<Result<ObjectMeta[]>> {
    return many(this.cluster.networkPolicies(namespace), metaOf);
  }

  events(namespace: string, fieldSelector: string): Promise<Result<EventView[]>> {
    return many(this.cluster.events(namespace, fieldSelector), eventView);
  }

  pods(namespace: string, labelSelector?: string): Promise<Result<PodView[]>> {
    return many(this.cluster.pods(namespace, labelSelector), podView);
  }

  nodes(): Promise<Result<NodeView[]>> {
    return many(this.cluster.nodes(), nodeView);
  }

  deployment(namespace: string, name: string): Promise<Result<DeploymentView | undefined>> {
    return one(this.cluster.deployment(namespace, name), deploymentView);
  }

  daemonSets(namespace: string): Promise<Result<ObjectMeta[]>> {
    return many(this.cluster.daemonSets(namespace), metaOf);
  }

  private ref(kind: SandboxKind, namespace: string): CustomRef {
    if (this.family === undefined) throw new Error(`reading ${kind} needs the release family`);
    return { ...gvrAt(kind, FAMILY_VERSION[this.family]), namespace };
  }
}

async function one<T>(p: Promise<Result<Obj | undefined>>, view: (o: Obj) => T): Promise<Result<T | undefined>> {
  const r = await p;
  return r.kind === 'ok' ? { kind: 'ok', value: r.value === undefined ? undefined : view(r.value) } : r;
}

async function many<T>(p: Promise<Result<Obj[]>>, view: (o: Obj) => T): Promise<Result<T[]>> {
  const r = await p;
  return r.kind === 'ok' ? { kind: 'ok', value: r.value.map(view) } : r;
}
