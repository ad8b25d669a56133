/**
 * The cluster reads, waits and probe-object writes the verifier and CLI make, answered as typed views ({@link ./views.ts})
 * so no layer above the adapter sees the objects' wire shape. A thin layer over {@link Cluster}: same Results, same
 * classification, same watch-based waits.
 */
import { FAMILY_VERSION, type SandboxKind } from '../../model/releases.js';
import { gvrAt } from '../../model/resources.js';
import type { ReleaseFamily } from '../../releases/types.js';
import type { AdapterError, Result } from '../types.js';
import type { Cluster, CustomRef, Obj, WaitFaults, WaitOptions, WaitOutcome } from './cluster.js';
import {
  claimView,
  networkPolicyView,
  runtimeClassView,
  serviceView,
  type NetworkPolicyView,
  type ServiceView,
  type RuntimeClassView,
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

/** What a typed wait ended with: the view that matched, or the last one seen. */
export type ViewWait<T> = WaitFaults &
  (
    | { readonly kind: 'matched'; readonly view: T; readonly waitedMs: number }
    | { readonly kind: 'timeout'; readonly last?: T; readonly waitedMs: number }
    | { readonly kind: 'failed'; readonly error: AdapterError; readonly waitedMs: number }
  );

/** A probe Sandbox made from a template's pod template: its name, labels (on it and its pod) and annotations. */
export interface ProbeSandboxSpec {
  readonly name: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly annotations: Readonly<Record<string, string>>;
  readonly template: TemplateView;
}

/**
 * `family` picks the served version of the agent-sandbox kinds (`version` overrides it, e.g. to read through a
 * conversion webhook); reads of core objects and CRDs do not need either.
 */
export class ClusterReads {
  constructor(
    readonly cluster: Cluster,
    readonly family?: ReleaseFamily,
    private readonly version?: string,
  ) {}

  /** The same reads at another served version of the agent-sandbox kinds. */
  at(version: string): ClusterReads {
    return new ClusterReads(this.cluster, this.family, version);
  }

  sandbox(namespace: string, name: string): Promise<Result<SandboxView | undefined>> {
    return one(this.cluster.getCustom(this.ref('Sandbox', namespace), name), (o) => sandboxView(o, this.family!));
  }

  claim(namespace: string, name: string): Promise<Result<ClaimView | undefined>> {
    return one(this.cluster.getCustom(this.ref('SandboxClaim', namespace), name), (o) => claimView(o, this.family!));
  }

  /** Whether the named object of an agent-sandbox kind exists. */
  async exists(kind: SandboxKind, namespace: string, name: string): Promise<Result<boolean>> {
    const r = await this.cluster.getCustom(this.ref(kind, namespace), name);
    return r.kind === 'ok' ? { kind: 'ok', value: r.value !== undefined } : r;
  }

  /** Identity of the objects at `ref` carrying `labelSelector`. */
  labelled(ref: CustomRef, labelSelector: string): Promise<Result<ObjectMeta[]>> {
    return many(this.cluster.listCustom(ref, labelSelector), metaOf);
  }

  pod(namespace: string, name: string): Promise<Result<PodView | undefined>> {
    return one(this.cluster.pod(namespace, name), podView);
  }

  service(namespace: string, name: string): Promise<Result<ServiceView | undefined>> {
    return one(this.cluster.service(namespace, name), serviceView);
  }

  serviceAccount(namespace: string, name: string): Promise<Result<ObjectMeta | undefined>> {
    return one(this.cluster.serviceAccount(namespace, name), metaOf);
  }

  runtimeClass(name: string): Promise<Result<RuntimeClassView | undefined>> {
    return one(this.cluster.runtimeClass(name), runtimeClassView);
  }

  /**
   * Waits (watch, {@link Cluster.waitFor}) until `ready` holds for the Sandbox as read. `ready` sees undefined while it
   * is absent, but only a present Sandbox matches.
   */
  async waitSandbox(
    namespace: string,
    name: string,
    ready: (sandbox: SandboxView | undefined) => boolean,
    opts: WaitOptions,
  ): Promise<ViewWait<SandboxView>> {
    return this.wait('Sandbox', namespace, name, (o) => sandboxView(o, this.family!), ready, opts);
  }

  /** Waits until `ready` holds for the claim as read (judged without its Sandbox); only a present claim matches. */
  async waitClaim(
    namespace: string,
    name: string,
    ready: (claim: ClaimView | undefined) => boolean,
    opts: WaitOptions,
  ): Promise<ViewWait<ClaimView>> {
    return this.wait('SandboxClaim', namespace, name, (o) => claimView(o, this.family!), ready, opts);
  }

  /** Waits until the object at `ref` is gone. */
  async waitGone(ref: CustomRef, name: string, opts: WaitOptions): Promise<ViewWait<undefined>> {
    const w = await this.cluster.waitFor(
      collectionPath(ref),
      name,
      () => this.cluster.getCustom(ref, name),
      (o) => o === undefined,
      opts,
    );
    return viewOf(w, () => undefined, undefined);
  }

  /** Creates a labelled SandboxWarmPool of `replicas` serving `template`. */
  createWarmPool(
    namespace: string,
    spec: { name: string; labels: Readonly<Record<string, string>>; template: string; replicas: number },
  ): Promise<Result<ObjectMeta>> {
    const ref = this.ref('SandboxWarmPool', namespace);
    return mapped(
      this.cluster.createCustom(ref, {
        apiVersion: `${ref.group}/${ref.version}`,
        kind: 'SandboxWarmPool',
        metadata: { name: spec.name, namespace, labels: { ...spec.labels } },
        spec: { replicas: spec.replicas, sandboxTemplateRef: { name: spec.template } },
      }),
      metaOf,
    );
  }

  /** Creates a bare Sandbox from a template's pod template, the spec's labels added to the Sandbox and its pod. */
  createSandbox(namespace: string, spec: ProbeSandboxSpec): Promise<Result<ObjectMeta>> {
    const ref = this.ref('Sandbox', namespace);
    const t = spec.template;
    return mapped(
      this.cluster.createCustom(ref, {
        apiVersion: `${ref.group}/${ref.version}`,
        kind: 'Sandbox',
        metadata: { name: spec.name, namespace, labels: { ...spec.labels }, annotations: { ...spec.annotations } },
        spec: {
          podTemplate: {
            metadata: {
              labels: { ...t.podLabels, ...spec.labels },
              ...(t.podAnnotations ? { annotations: t.podAnnotations } : {}),
            },
            spec: t.podSpec,
          },
        },
      } as Obj),
      metaOf,
    );
  }

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

  /** NetworkPolicies: identity and owners, the pods they select and the egress and ingress they allow. */
  networkPolicies(namespace: string): Promise<Result<NetworkPolicyView[]>> {
    return many(this.cluster.networkPolicies(namespace), networkPolicyView);
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
    return { ...gvrAt(kind, this.version ?? FAMILY_VERSION[this.family]), namespace };
  }

  private async wait<T>(
    kind: SandboxKind,
    namespace: string,
    name: string,
    view: (o: Obj) => T,
    ready: (v: T | undefined) => boolean,
    opts: WaitOptions,
  ): Promise<ViewWait<T>> {
    const ref = this.ref(kind, namespace);
    const w = await this.cluster.waitFor(
      collectionPath(ref),
      name,
      () => this.cluster.getCustom(ref, name),
      (o) => {
        if (o !== undefined) return ready(view(o));
        ready(undefined);
        return false;
      },
      opts,
    );
    return viewOf(w, view, undefined);
  }
}

/** The watch path of a namespaced custom resource collection. */
function collectionPath(ref: CustomRef): string {
  return `/apis/${ref.group}/${ref.version}/namespaces/${ref.namespace}/${ref.plural}`;
}

/** `absent`: the view of a match on absence (only {@link ClusterReads.waitGone} matches there). */
function viewOf<T>(w: WaitOutcome, view: (o: Obj) => T, absent: T | undefined): ViewWait<T> {
  const faults = { reconnects: w.reconnects, gone: w.gone, errors: w.errors, waitedMs: w.waitedMs };
  if (w.kind === 'failed') return { kind: 'failed', error: w.error, ...faults };
  if (w.kind === 'timeout') return { kind: 'timeout', ...(w.last ? { last: view(w.last) } : {}), ...faults };
  return { kind: 'matched', view: w.obj === undefined ? (absent as T) : view(w.obj), ...faults };
}

async function mapped<A, B>(p: Promise<Result<A>>, fn: (a: A) => B): Promise<Result<B>> {
  const r = await p;
  return r.kind === 'ok' ? { kind: 'ok', value: fn(r.value) } : r;
}

async function one<T>(p: Promise<Result<Obj | undefined>>, view: (o: Obj) => T): Promise<Result<T | undefined>> {
  const r = await p;
  return r.kind === 'ok' ? { kind: 'ok', value: r.value === undefined ? undefined : view(r.value) } : r;
}

async function many<T>(p: Promise<Result<Obj[]>>, view: (o: Obj) => T): Promise<Result<T[]>> {
  const r = await p;
  return r.kind === 'ok' ? { kind: 'ok', value: r.value.map(view) } : r;
}
