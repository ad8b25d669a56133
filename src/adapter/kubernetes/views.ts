/**
 * Typed views of the objects the verifier and CLI read: the few fields they use, named for what they mean, so no layer
 * above the adapter reads raw Kubernetes JSON. Pure functions over the plain objects {@link Cluster} returns.
 */
import type { Obj } from './cluster.js';
import { statusCondition } from './conditions.js';
import { claimPhase, sandboxPhase, type ClaimObject, type PhaseJudgement, type SandboxObject } from './phase.js';
import type { SandboxBlueprint, TemplateBlueprint } from './blueprint.js';
import { VERSION_LABEL } from './resources.js';
import type { ReleaseFamily } from '../../releases/types.js';

/** Annotation naming a Sandbox's backing pod (`api/v1beta1/sandbox_types.go@v0.5.6`). */
const POD_NAME_ANNOTATION = 'agents.x-k8s.io/pod-name';

/** Identity and bookkeeping fields every view carries. */
export interface ObjectMeta {
  readonly name: string;
  readonly namespace?: string;
  readonly uid?: string;
  readonly generation: number;
  readonly labels: Readonly<Record<string, string>>;
  readonly annotations: Readonly<Record<string, string>>;
  readonly deleting: boolean;
  readonly ownerReferences: ReadonlyArray<{
    readonly kind?: string;
    readonly name?: string;
    readonly uid?: string;
    readonly controller?: boolean;
  }>;
}

export function metaOf(o: Obj): ObjectMeta {
  const m = (o.metadata ?? {}) as Obj['metadata'] & {
    annotations?: Record<string, string>;
    deletionTimestamp?: unknown;
  };
  return {
    name: m?.name ?? '?',
    ...(m?.namespace ? { namespace: m.namespace } : {}),
    ...(m?.uid ? { uid: m.uid } : {}),
    generation: m?.generation ?? 0,
    labels: m?.labels ?? {},
    annotations: m?.annotations ?? {},
    deleting: m?.deletionTimestamp !== undefined && m.deletionTimestamp !== null,
    ownerReferences: m?.ownerReferences ?? [],
  };
}

export interface PodView {
  readonly meta: ObjectMeta;
  readonly ip?: string;
  /** Ready=True (pod conditions carry no observedGeneration on the releases tested). */
  readonly ready: boolean;
  readonly phase?: string;
  readonly nodeName?: string;
  readonly runtimeClassName?: string;
  readonly containers: ReadonlyArray<{
    readonly name: string;
    readonly image?: string;
    readonly args: readonly string[];
    readonly ports: readonly number[];
  }>;
}

export function podView(o: Obj): PodView {
  const spec = (o.spec ?? {}) as {
    nodeName?: string;
    runtimeClassName?: string;
    containers?: Array<{ name?: string; image?: string; args?: string[]; ports?: Array<{ containerPort?: number }> }>;
  };
  const status = (o.status ?? {}) as { podIP?: string; phase?: string };
  return {
    meta: metaOf(o),
    ...(status.podIP ? { ip: status.podIP } : {}),
    ready: statusCondition(o, 'Ready') === 'True',
    ...(status.phase ? { phase: status.phase } : {}),
    ...(spec.nodeName ? { nodeName: spec.nodeName } : {}),
    ...(spec.runtimeClassName ? { runtimeClassName: spec.runtimeClassName } : {}),
    containers: (spec.containers ?? []).map((c) => ({
      name: c.name ?? '',
      ...(c.image ? { image: c.image } : {}),
      args: c.args ?? [],
      ports: (c.ports ?? []).map((p) => p.containerPort ?? 0),
    })),
  };
}

export interface NodeView {
  readonly meta: ObjectMeta;
  readonly ready: boolean;
  readonly taints: ReadonlyArray<{ readonly key?: string; readonly value?: string; readonly effect?: string }>;
  readonly kernelVersion?: string;
  readonly containerRuntimeVersion?: string;
}

export function nodeView(o: Obj): NodeView {
  const spec = (o.spec ?? {}) as { taints?: Array<{ key?: string; value?: string; effect?: string }> };
  const info =
    ((o.status ?? {}) as { nodeInfo?: { kernelVersion?: string; containerRuntimeVersion?: string } }).nodeInfo ?? {};
  return {
    meta: metaOf(o),
    ready: statusCondition(o, 'Ready') === 'True',
    taints: spec.taints ?? [],
    ...(info.kernelVersion ? { kernelVersion: info.kernelVersion } : {}),
    ...(info.containerRuntimeVersion ? { containerRuntimeVersion: info.containerRuntimeVersion } : {}),
  };
}

export interface RuntimeClassView {
  readonly meta: ObjectMeta;
  readonly handler: string;
  readonly nodeSelector: Readonly<Record<string, string>>;
  readonly tolerations: ReadonlyArray<{
    readonly key?: string;
    readonly operator?: string;
    readonly value?: string;
    readonly effect?: string;
  }>;
}

export function runtimeClassView(o: Obj): RuntimeClassView {
  const scheduling =
    (o as { scheduling?: { nodeSelector?: Record<string, string>; tolerations?: RuntimeClassView['tolerations'] } })
      .scheduling ?? {};
  return {
    meta: metaOf(o),
    handler: String((o as { handler?: unknown }).handler ?? ''),
    nodeSelector: scheduling.nodeSelector ?? {},
    tolerations: scheduling.tolerations ?? [],
  };
}

/** A Sandbox (either version), with its phase judged at its current generation. */
export interface SandboxView {
  readonly meta: ObjectMeta;
  /** Backing pod: annotation `agents.x-k8s.io/pod-name`, else the Sandbox's name. */
  readonly podName: string;
  readonly podIPs: readonly string[];
  readonly phase: PhaseJudgement;
  /** What the controller compares against the template's current blueprint ({@link blueprintDrift}). */
  readonly blueprint: SandboxBlueprint;
}

export function sandboxView(o: Obj, family: ReleaseFamily): SandboxView {
  const meta = metaOf(o);
  return {
    meta,
    podName: meta.annotations[POD_NAME_ANNOTATION] ?? meta.name,
    podIPs: ((o.status ?? {}) as { podIPs?: string[] }).podIPs ?? [],
    phase: sandboxPhase(o as SandboxObject, family),
    blueprint: o as SandboxBlueprint,
  };
}

/** A SandboxClaim: the Sandbox it names (when bound) and its phase, judged by that Sandbox when given. */
export interface ClaimView {
  readonly meta: ObjectMeta;
  readonly boundSandbox?: string;
  /** `spec.warmPoolRef.name`, when the claim names a pool. */
  readonly warmPool?: string;
  readonly phase: PhaseJudgement;
}

/** `sandbox`: the bound Sandbox as read (`'missing'` when it is gone, undefined when not read). */
export function claimView(o: Obj, family: ReleaseFamily, sandbox?: Obj | 'missing'): ClaimView {
  const bound = ((o.status ?? {}) as { sandbox?: { name?: unknown } }).sandbox?.name;
  const pool = ((o.spec ?? {}) as { warmPoolRef?: { name?: unknown } }).warmPoolRef?.name;
  const sb = sandbox === 'missing' ? 'missing' : (sandbox as SandboxObject | undefined);
  return {
    meta: metaOf(o),
    ...(typeof bound === 'string' ? { boundSandbox: bound } : {}),
    ...(typeof pool === 'string' ? { warmPool: pool } : {}),
    phase: claimPhase(o as ClaimObject, sb, family),
  };
}

/** A SandboxTemplate: what a probe Sandbox copies from it and what the template probe compares. */
export interface TemplateView {
  readonly meta: ObjectMeta;
  readonly podLabels: Readonly<Record<string, string>>;
  readonly podAnnotations?: Readonly<Record<string, string>>;
  /** The pod spec, passed through unread into a probe Sandbox. */
  readonly podSpec: Readonly<Record<string, unknown>>;
  readonly runtimeClassName?: string;
  readonly networkPolicyManagement?: string;
  /** The served apiVersion the template was read at. */
  readonly apiVersion: string;
  /** The spec as served, for schema validation against the pinned CRD. */
  readonly spec: Readonly<Record<string, unknown>>;
  /** What a current Sandbox must match ({@link blueprintDrift}). */
  readonly blueprint: TemplateBlueprint;
}

export function templateView(o: Obj): TemplateView {
  const spec = (o.spec ?? {}) as {
    networkPolicyManagement?: string;
    podTemplate?: {
      metadata?: { labels?: Record<string, string>; annotations?: Record<string, string> };
      spec?: Record<string, unknown> & { runtimeClassName?: string };
    };
  };
  const pt = spec.podTemplate ?? {};
  return {
    meta: metaOf(o),
    podLabels: pt.metadata?.labels ?? {},
    ...(pt.metadata?.annotations ? { podAnnotations: pt.metadata.annotations } : {}),
    podSpec: pt.spec ?? {},
    ...(pt.spec?.runtimeClassName ? { runtimeClassName: pt.spec.runtimeClassName } : {}),
    ...(spec.networkPolicyManagement ? { networkPolicyManagement: spec.networkPolicyManagement } : {}),
    apiVersion: String(o.apiVersion ?? ''),
    spec: (o.spec ?? {}) as Record<string, unknown>,
    blueprint: o as TemplateBlueprint,
  };
}

/** A SandboxWarmPool: its size, the template it serves and the generation its status was written for. */
export interface WarmPoolView {
  readonly meta: ObjectMeta;
  readonly replicas: number;
  readonly templateName?: string;
  readonly observedGeneration?: number;
}

export function warmPoolView(o: Obj): WarmPoolView {
  const spec = (o.spec ?? {}) as { replicas?: number; sandboxTemplateRef?: { name?: string } };
  const status = (o.status ?? {}) as { observedGeneration?: number };
  return {
    meta: metaOf(o),
    replicas: Number(spec.replicas ?? 1),
    ...(spec.sandboxTemplateRef?.name ? { templateName: spec.sandboxTemplateRef.name } : {}),
    ...(status.observedGeneration !== undefined ? { observedGeneration: status.observedGeneration } : {}),
  };
}

/** A live CustomResourceDefinition: versions, Established, conversion client config and the release label. */
export interface CrdView {
  readonly served: readonly string[];
  readonly storage: string | undefined;
  readonly established: boolean;
  readonly strategy: string;
  readonly service?: { readonly name?: string; readonly namespace?: string; readonly path?: string };
  readonly url?: string;
  readonly caBundle: boolean;
  readonly versionLabel?: string;
  /** `openAPIV3Schema` of each served version, by version name (for schema fingerprints). */
  readonly schemas: Readonly<Record<string, unknown>>;
}

export function crdView(crd: Obj): CrdView {
  const spec = (crd.spec ?? {}) as {
    versions?: Array<{ name: string; served?: boolean; storage?: boolean; schema?: { openAPIV3Schema?: unknown } }>;
    conversion?: {
      strategy?: string;
      webhook?: {
        clientConfig?: {
          service?: { name?: string; namespace?: string; path?: string };
          url?: string;
          caBundle?: string;
        };
      };
    };
  };
  const cc = spec.conversion?.webhook?.clientConfig;
  const label = crd.metadata?.labels?.[VERSION_LABEL];
  const served = (spec.versions ?? []).filter((v) => v.served);
  return {
    served: served.map((v) => v.name).sort(),
    storage: (spec.versions ?? []).find((v) => v.storage)?.name,
    established: statusCondition(crd, 'Established') === 'True',
    strategy: spec.conversion?.strategy ?? 'None',
    ...(cc?.service ? { service: cc.service } : {}),
    ...(cc?.url ? { url: cc.url } : {}),
    caBundle: typeof cc?.caBundle === 'string' && cc.caBundle.length > 0,
    ...(label ? { versionLabel: label } : {}),
    schemas: Object.fromEntries(served.map((v) => [v.name, v.schema?.openAPIV3Schema])),
  };
}

/** A core/v1 Event: the fields that say what happened, where, how often and when. */
export interface EventView {
  readonly type?: string;
  readonly reason?: string;
  readonly message?: string;
  /** `count`, else `series.count`, else 1. */
  readonly count: number;
  /** The node it was recorded on: `source.host`, else `reportingInstance` when the kubelet reported it. */
  readonly node?: string;
  readonly involvedObject?: { readonly kind?: string; readonly name?: string };
  /** Newest time it was seen (lastTimestamp / series.lastObservedTime / eventTime / creationTimestamp), ms; 0 when none. */
  readonly at: number;
}

export function eventView(o: Obj): EventView {
  const e = o as {
    type?: string;
    reason?: string;
    message?: string;
    count?: number;
    series?: { count?: number; lastObservedTime?: string };
    source?: { host?: string };
    reportingComponent?: string;
    reportingInstance?: string;
    lastTimestamp?: string;
    eventTime?: string;
    involvedObject?: { kind?: string; name?: string };
    metadata?: { creationTimestamp?: string };
  };
  // The kubelet's instance is its node name; the scheduler's is `default-scheduler-<host>`, which is no node.
  const node = e.source?.host || (e.reportingComponent === 'kubelet' ? e.reportingInstance || undefined : undefined);
  const t = e.lastTimestamp ?? e.series?.lastObservedTime ?? e.eventTime ?? e.metadata?.creationTimestamp;
  const ms = t === undefined ? NaN : new Date(t).getTime();
  return {
    ...(e.type ? { type: e.type } : {}),
    ...(e.reason ? { reason: e.reason } : {}),
    ...(e.message !== undefined ? { message: e.message } : {}),
    count: e.count ?? e.series?.count ?? 1,
    ...(node ? { node } : {}),
    ...(e.involvedObject ? { involvedObject: e.involvedObject } : {}),
    at: Number.isNaN(ms) ? 0 : ms,
  };
}

/** A Deployment: its first container and whether it is Available at its current generation. */
export interface DeploymentView {
  readonly meta: ObjectMeta;
  readonly image: string;
  readonly args: readonly string[];
  /** `status.observedGeneration`, when the status has one. */
  readonly observedGeneration?: number;
  readonly updatedReplicas: number;
  readonly availableReplicas: number;
  /** Available condition status (`True`/`False`/…) and reason, when there is one. */
  readonly available?: { readonly status?: string; readonly reason?: string };
}

export function deploymentView(o: Obj): DeploymentView {
  const d = o as Obj & {
    spec?: { template?: { spec?: { containers?: Array<{ image?: string; args?: string[] }> } } };
    status?: {
      observedGeneration?: number;
      updatedReplicas?: number;
      availableReplicas?: number;
      conditions?: Array<{ type?: string; status?: string; reason?: string }>;
    };
  };
  const container = d.spec?.template?.spec?.containers?.[0];
  const available = (d.status?.conditions ?? []).find((c) => c.type === 'Available');
  return {
    meta: metaOf(o),
    image: container?.image ?? '',
    args: container?.args ?? [],
    ...(d.status?.observedGeneration !== undefined ? { observedGeneration: d.status.observedGeneration } : {}),
    updatedReplicas: d.status?.updatedReplicas ?? 0,
    availableReplicas: d.status?.availableReplicas ?? 0,
    ...(available
      ? {
          available: {
            ...(available.status ? { status: available.status } : {}),
            ...(available.reason ? { reason: available.reason } : {}),
          },
        }
      : {}),
  };
}
