/**
 * Typed views of the objects the verifier and CLI read: the few fields they use, named for what they mean, so no layer
 * above the adapter reads raw Kubernetes JSON. Pure functions over the plain objects {@link Cluster} returns.
 */
import type { Obj } from './cluster.js';
import { readCondition, statusCondition, type ConditionReading, type Conditioned } from './conditions.js';
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
  /** `creationTimestamp` in ms since the epoch, when set and valid. */
  readonly createdAt?: number;
  readonly ownerReferences: ReadonlyArray<{
    readonly kind?: string;
    readonly name?: string;
    readonly uid?: string;
    readonly controller?: boolean;
  }>;
}

/** `o` is any object with Kubernetes `metadata` (plain JSON or a client-node model). */
export function metaOf(o: object): ObjectMeta {
  const m = ((o as Obj).metadata ?? {}) as Obj['metadata'] & {
    annotations?: Record<string, string>;
    deletionTimestamp?: unknown;
    creationTimestamp?: unknown;
  };
  const created = typeof m?.creationTimestamp === 'string' ? Date.parse(m.creationTimestamp) : NaN;
  return {
    name: m?.name ?? '?',
    ...(m?.namespace ? { namespace: m.namespace } : {}),
    ...(m?.uid ? { uid: m.uid } : {}),
    generation: m?.generation ?? 0,
    labels: m?.labels ?? {},
    annotations: m?.annotations ?? {},
    deleting: m?.deletionTimestamp !== undefined && m.deletionTimestamp !== null,
    ...(Number.isNaN(created) ? {} : { createdAt: created }),
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
  /** `status.startTime`: when the kubelet acknowledged the pod (RFC 3339, whole seconds). */
  readonly startTime?: string;
  readonly containers: ReadonlyArray<{
    readonly name: string;
    readonly image?: string;
    readonly args: readonly string[];
    readonly ports: readonly number[];
    /** `resources.limits.memory` as written (a quantity, e.g. `64Mi`), when set. */
    readonly memoryLimit?: string;
  }>;
  /** Init and regular container statuses, in that order: what each runs and whether it has started. */
  readonly containerStatuses: readonly ContainerStatusView[];
}

/** One `status.(init)ContainerStatuses[]` entry: `image` as the runtime spells it, `imageID` what it resolved to. */
export interface ContainerStatusView {
  readonly name: string;
  readonly image: string;
  readonly imageID: string;
  /** State running or terminated (a waiting container has pulled nothing yet). */
  readonly started: boolean;
  /** `restartCount`. */
  readonly restarts: number;
  /** `state.waiting.reason`, e.g. `CrashLoopBackOff`, while the container waits. */
  readonly waiting?: string;
  /** `state.terminated`: how the current run of the container ended, while it is terminated. */
  readonly terminated?: TerminationView;
  /** `lastState.terminated`: how the previous run ended, once the kubelet restarted the container. */
  readonly lastTerminated?: TerminationView;
}

/** A container's `terminated` state: the kubelet's reason (e.g. `OOMKilled`, `Error`), exit code and end time. */
export interface TerminationView {
  /** The kubelet's `terminated.reason`, copied as is: an upstream code, not one of AgentPlane's. */
  readonly reason?: string;
  readonly exitCode: number;
  /** `finishedAt` in ms since the epoch, when set and valid. */
  readonly finishedAtMs?: number;
}

interface RawTermination {
  reason?: string;
  exitCode?: number;
  finishedAt?: string;
}

interface RawContainerStatus {
  name?: string;
  image?: string;
  imageID?: string;
  restartCount?: number;
  state?: { running?: unknown; terminated?: RawTermination; waiting?: { reason?: string } };
  lastState?: { terminated?: RawTermination };
}

function terminationView(t: RawTermination): TerminationView {
  const finished = typeof t.finishedAt === 'string' ? Date.parse(t.finishedAt) : NaN;
  return {
    ...(t.reason ? { reason: t.reason } : {}),
    exitCode: Number(t.exitCode ?? 0),
    ...(Number.isFinite(finished) ? { finishedAtMs: finished } : {}),
  };
}

export function podView(o: Obj): PodView {
  const spec = (o.spec ?? {}) as {
    nodeName?: string;
    runtimeClassName?: string;
    containers?: Array<{
      name?: string;
      image?: string;
      args?: string[];
      ports?: Array<{ containerPort?: number }>;
      resources?: { limits?: { memory?: string | number } };
    }>;
  };
  const status = (o.status ?? {}) as {
    podIP?: string;
    phase?: string;
    startTime?: string;
    containerStatuses?: RawContainerStatus[];
    initContainerStatuses?: RawContainerStatus[];
  };
  const statuses = [...(status.initContainerStatuses ?? []), ...(status.containerStatuses ?? [])];
  return {
    meta: metaOf(o),
    ...(status.podIP ? { ip: status.podIP } : {}),
    ready: statusCondition(o, 'Ready') === 'True',
    ...(status.phase ? { phase: status.phase } : {}),
    ...(spec.nodeName ? { nodeName: spec.nodeName } : {}),
    ...(spec.runtimeClassName ? { runtimeClassName: spec.runtimeClassName } : {}),
    ...(status.startTime ? { startTime: status.startTime } : {}),
    containers: (spec.containers ?? []).map((c) => ({
      name: c.name ?? '',
      ...(c.image ? { image: c.image } : {}),
      args: c.args ?? [],
      ports: (c.ports ?? []).map((p) => p.containerPort ?? 0),
      ...(c.resources?.limits?.memory !== undefined ? { memoryLimit: String(c.resources.limits.memory) } : {}),
    })),
    containerStatuses: statuses.map((c) => ({
      name: c.name ?? '',
      image: c.image ?? '',
      imageID: c.imageID ?? '',
      started: c.state?.running != null || c.state?.terminated != null,
      restarts: c.restartCount ?? 0,
      ...(c.state?.waiting?.reason ? { waiting: c.state.waiting.reason } : {}),
      ...(c.state?.terminated ? { terminated: terminationView(c.state.terminated) } : {}),
      ...(c.lastState?.terminated ? { lastTerminated: terminationView(c.lastState.terminated) } : {}),
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
  /** `spec.shutdownTime` (same field on every release tested), when set: the Sandbox expires then. */
  readonly shutdownTime?: string;
  /** Condition `type`, trusted only at the Sandbox's current generation ({@link readCondition}). */
  readonly condition: (type: string) => ConditionReading;
}

/** The object each Sandbox view was made from, so a claim can be judged by its bound Sandbox ({@link claimWithSandbox}). */
const SANDBOX_OBJECTS = new WeakMap<SandboxView, SandboxObject>();

export function sandboxView(o: Obj, family: ReleaseFamily): SandboxView {
  const meta = metaOf(o);
  const shutdown = ((o.spec ?? {}) as { shutdownTime?: unknown }).shutdownTime;
  const view: SandboxView = {
    meta,
    podName: meta.annotations[POD_NAME_ANNOTATION] ?? meta.name,
    podIPs: ((o.status ?? {}) as { podIPs?: string[] }).podIPs ?? [],
    phase: sandboxPhase(o as SandboxObject, family),
    blueprint: o as SandboxBlueprint,
    ...(typeof shutdown === 'string' ? { shutdownTime: shutdown } : {}),
    condition: conditionOf(o),
  };
  SANDBOX_OBJECTS.set(view, o as SandboxObject);
  return view;
}

/** A SandboxClaim: the Sandbox it names (when bound) and its phase, judged by that Sandbox when given. */
export interface ClaimView {
  readonly meta: ObjectMeta;
  readonly boundSandbox?: string;
  /** `spec.warmPoolRef.name` (v1beta1), when the claim names a pool. */
  readonly warmPool?: string;
  /** `spec.sandboxTemplateRef.name`: v1alpha1 claims name their template (v1beta1 ones reach it through the pool). */
  readonly template?: string;
  /** `spec.warmpool` of a v1alpha1 claim: `default` (or unset), `none`, or a pool name. */
  readonly warmpool?: string;
  /** Whether `spec.lifecycle` sets `shutdownTime` or `ttlSecondsAfterFinished` (the claim expires on its own). */
  readonly expires: boolean;
  readonly phase: PhaseJudgement;
  /** The claim's own condition `type`, trusted only at the claim's current generation. */
  readonly condition: (type: string) => ConditionReading;
}

/** The object and family each claim view was made from ({@link claimWithSandbox}). */
const CLAIM_OBJECTS = new WeakMap<ClaimView, { readonly o: Obj; readonly family: ReleaseFamily }>();

/** `sandbox`: the bound Sandbox as read (`'missing'` when it is gone, undefined when not read). */
export function claimView(o: Obj, family: ReleaseFamily, sandbox?: Obj | 'missing'): ClaimView {
  return claimOf(o, family, sandbox === 'missing' ? 'missing' : (sandbox as SandboxObject | undefined));
}

/** The claim judged again by its bound Sandbox as now read (`'missing'` when that Sandbox is gone). */
export function claimWithSandbox(claim: ClaimView, sandbox: SandboxView | 'missing'): ClaimView {
  const made = CLAIM_OBJECTS.get(claim);
  if (!made) throw new Error(`claim view ${claim.meta.name} was not made by claimView`);
  const sb = sandbox === 'missing' ? 'missing' : SANDBOX_OBJECTS.get(sandbox);
  if (!sb) throw new Error(`sandbox view ${claim.boundSandbox ?? '?'} was not made by sandboxView`);
  return claimOf(made.o, made.family, sb);
}

function claimOf(o: Obj, family: ReleaseFamily, sandbox: SandboxObject | 'missing' | undefined): ClaimView {
  const bound = ((o.status ?? {}) as { sandbox?: { name?: unknown } }).sandbox?.name;
  const spec = (o.spec ?? {}) as {
    warmPoolRef?: { name?: unknown };
    sandboxTemplateRef?: { name?: unknown };
    warmpool?: unknown;
    lifecycle?: { shutdownTime?: unknown; ttlSecondsAfterFinished?: unknown };
  };
  const pool = spec.warmPoolRef?.name;
  const template = spec.sandboxTemplateRef?.name;
  const view: ClaimView = {
    meta: metaOf(o),
    ...(typeof bound === 'string' && bound !== '' ? { boundSandbox: bound } : {}),
    ...(typeof pool === 'string' ? { warmPool: pool } : {}),
    ...(typeof template === 'string' ? { template } : {}),
    ...(typeof spec.warmpool === 'string' ? { warmpool: spec.warmpool } : {}),
    expires: spec.lifecycle?.shutdownTime != null || spec.lifecycle?.ttlSecondsAfterFinished != null,
    phase: claimPhase(o as ClaimObject, sandbox, family),
    condition: conditionOf(o),
  };
  CLAIM_OBJECTS.set(view, { o, family });
  return view;
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
  /** Condition `type`, trusted only at the template's current generation. */
  readonly condition: (type: string) => ConditionReading;
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
    condition: conditionOf(o),
  };
}

/** A SandboxWarmPool: its size, the template it serves and the generation its status was written for. */
export interface WarmPoolView {
  readonly meta: ObjectMeta;
  readonly replicas: number;
  /** `status.readyReplicas`; an absent counter is 0. */
  readonly readyReplicas: number;
  /**
   * The status counters as written, each undefined when absent (`omitempty`: the controller omits a zero). Fields of
   * the pool status at every pinned tag: `replicas` (live members), `readyReplicas` (members Ready), `selector`
   * (`extensions/api/v1alpha1/sandboxwarmpool_types.go@v0.4.6`, `extensions/api/v1beta1/sandboxwarmpool_types.go@v1.0.3`).
   */
  readonly counters: { readonly replicas?: number; readonly readyReplicas?: number; readonly selector?: string };
  readonly templateName?: string;
  readonly observedGeneration?: number;
  /** Condition `type`, trusted only at the pool's current generation. */
  readonly condition: (type: string) => ConditionReading;
}

export function warmPoolView(o: Obj): WarmPoolView {
  const spec = (o.spec ?? {}) as { replicas?: number; sandboxTemplateRef?: { name?: string } };
  const status = (o.status ?? {}) as {
    observedGeneration?: number;
    replicas?: number;
    readyReplicas?: number;
    selector?: string;
  };
  return {
    meta: metaOf(o),
    replicas: Number(spec.replicas ?? 1),
    readyReplicas: Number(status.readyReplicas ?? 0),
    counters: {
      ...(status.replicas !== undefined ? { replicas: Number(status.replicas) } : {}),
      ...(status.readyReplicas !== undefined ? { readyReplicas: Number(status.readyReplicas) } : {}),
      ...(status.selector !== undefined ? { selector: status.selector } : {}),
    },
    ...(spec.sandboxTemplateRef?.name ? { templateName: spec.sandboxTemplateRef.name } : {}),
    ...(status.observedGeneration !== undefined ? { observedGeneration: status.observedGeneration } : {}),
    condition: conditionOf(o),
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
  /** The Event's `reason` as its reporter wrote it (kubelet, scheduler, controller): an upstream code, not one of AgentPlane's. */
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
  /** Image, args and name of the first container. */
  readonly image: string;
  readonly args: readonly string[];
  /** The first container's environment variables with a literal `value` (those from `valueFrom` are not known here). */
  readonly env: Readonly<Record<string, string>>;
  readonly container?: string;
  /** `spec.selector.matchLabels`: the labels of its pods. */
  readonly selector: Readonly<Record<string, string>>;
  /** `status.observedGeneration`, when the status has one. */
  readonly observedGeneration?: number;
  readonly updatedReplicas: number;
  readonly availableReplicas: number;
  /**
   * Condition `type`. Deployment conditions carry no observedGeneration: they are as current as
   * `status.observedGeneration`, so they count only when that equals the Deployment's generation.
   */
  readonly condition: (type: string) => ConditionReading;
}

export function deploymentView(o: Obj): DeploymentView {
  const d = o as Obj & {
    spec?: {
      selector?: { matchLabels?: Record<string, string> };
      template?: {
        spec?: {
          containers?: Array<{
            name?: string;
            image?: string;
            args?: string[];
            env?: Array<{ name?: string; value?: string }>;
          }>;
        };
      };
    };
    status?: {
      observedGeneration?: number;
      updatedReplicas?: number;
      availableReplicas?: number;
      conditions?: Array<{ type?: string; status?: string; reason?: string }>;
    };
  };
  const container = d.spec?.template?.spec?.containers?.[0];
  const observed = d.status?.observedGeneration;
  const dated: Conditioned = {
    metadata: { generation: d.metadata?.generation ?? 0 },
    status: {
      conditions: (d.status?.conditions ?? []).map((c) => ({
        ...c,
        ...(observed !== undefined ? { observedGeneration: observed } : {}),
      })),
    },
  };
  return {
    meta: metaOf(o),
    image: container?.image ?? '',
    args: container?.args ?? [],
    env: Object.fromEntries(
      (container?.env ?? [])
        .filter((e) => typeof e.name === 'string' && typeof e.value === 'string')
        .map((e) => [e.name!, e.value!]),
    ),
    ...(container?.name ? { container: container.name } : {}),
    selector: d.spec?.selector?.matchLabels ?? {},
    ...(d.status?.observedGeneration !== undefined ? { observedGeneration: d.status.observedGeneration } : {}),
    updatedReplicas: d.status?.updatedReplicas ?? 0,
    availableReplicas: d.status?.availableReplicas ?? 0,
    condition: (type) => readCondition(dated, type),
  };
}

/** Condition reader of one object, judged at its own `metadata.generation`. */
function conditionOf(o: Obj): (type: string) => ConditionReading {
  return (type) => readCondition(o as Conditioned, type);
}

/** A label selector (`matchLabels` and `matchExpressions`), as NetworkPolicies and workloads use it. */
export interface LabelSelectorView {
  readonly matchLabels?: Readonly<Record<string, string>>;
  readonly matchExpressions?: ReadonlyArray<{
    readonly key: string;
    readonly operator: string;
    readonly values?: readonly string[];
  }>;
}

/** One egress rule: its destinations (`to`, absent = every destination) and ports. */
export interface EgressRuleView {
  /** Destinations (absent or empty = every destination); a peer has the same shape as an ingress rule's. */
  readonly to?: readonly IngressPeerView[];
  readonly ports: ReadonlyArray<{
    readonly port?: number | string;
    readonly endPort?: number;
    readonly protocol?: string;
  }>;
}

/** One `from` peer of an ingress rule. */
export interface IngressPeerView {
  readonly podSelector?: LabelSelectorView;
  readonly namespaceSelector?: LabelSelectorView;
  readonly ipBlock?: { readonly cidr?: string; readonly except?: readonly string[] };
}

/** One ingress rule: its sources (`from`, absent or empty = every source) and ports (empty = every port). */
export interface IngressRuleView {
  readonly from?: readonly IngressPeerView[];
  readonly ports: ReadonlyArray<{
    readonly port?: number | string;
    readonly endPort?: number;
    readonly protocol?: string;
  }>;
}

/** A NetworkPolicy: which pods it selects and whether (and how widely) it restricts their egress and ingress. */
export interface NetworkPolicyView {
  readonly meta: ObjectMeta;
  readonly podSelector?: LabelSelectorView;
  /** Restricts egress: `policyTypes` names Egress, or (unset) the policy has egress rules. */
  readonly restrictsEgress: boolean;
  readonly egress: readonly EgressRuleView[];
  /** Restricts ingress: `policyTypes` unset or empty (Ingress is then implied), or naming Ingress. */
  readonly restrictsIngress: boolean;
  readonly ingress: readonly IngressRuleView[];
}

export function networkPolicyView(o: Obj): NetworkPolicyView {
  const spec = (o.spec ?? {}) as {
    podSelector?: LabelSelectorView;
    policyTypes?: string[];
    egress?: Array<{ to?: EgressRuleView['to']; ports?: EgressRuleView['ports'] }>;
    // client-node's typed model names `from` `_from` (a reserved word in its generator); raw JSON names it `from`.
    ingress?: Array<{ from?: IngressPeerView[]; _from?: IngressPeerView[]; ports?: IngressRuleView['ports'] }>;
  };
  const types = spec.policyTypes;
  return {
    meta: metaOf(o),
    ...(spec.podSelector ? { podSelector: spec.podSelector } : {}),
    restrictsEgress: (types ?? []).includes('Egress') || (spec.egress !== undefined && types === undefined),
    egress: (spec.egress ?? []).map((r) => ({ ...(r.to ? { to: r.to } : {}), ports: r.ports ?? [] })),
    restrictsIngress: types === undefined || types.length === 0 || types.includes('Ingress'),
    ingress: (spec.ingress ?? []).map((r) => {
      const from = r.from ?? r._from;
      return { ...(from ? { from } : {}), ports: r.ports ?? [] };
    }),
  };
}

/** A Service: identity and the labels of the pods behind it (`spec.selector`, empty when it selects none). */
export interface ServiceView {
  readonly meta: ObjectMeta;
  readonly selector: Readonly<Record<string, string>>;
}

export function serviceView(o: Obj): ServiceView {
  return { meta: metaOf(o), selector: ((o.spec ?? {}) as { selector?: Record<string, string> }).selector ?? {} };
}

/** One RBAC rule of a Role or ClusterRole. */
export interface PolicyRuleView {
  readonly apiGroups: readonly string[];
  readonly resources: readonly string[];
  readonly verbs: readonly string[];
  readonly resourceNames: readonly string[];
}

/** A Role or ClusterRole (of a pinned release or the cluster); undefined for any other kind. */
export interface RoleView {
  readonly kind: 'Role' | 'ClusterRole';
  readonly meta: ObjectMeta;
  readonly rules: readonly PolicyRuleView[];
}

export function roleView(o: object): RoleView | undefined {
  const r = o as { kind?: unknown; rules?: Array<Partial<Record<keyof PolicyRuleView, string[]>>> };
  if (r.kind !== 'Role' && r.kind !== 'ClusterRole') return undefined;
  return {
    kind: r.kind,
    meta: metaOf(o),
    rules: (r.rules ?? []).map((x) => ({
      apiGroups: x.apiGroups ?? [''],
      resources: x.resources ?? [],
      verbs: x.verbs ?? [],
      resourceNames: x.resourceNames ?? [],
    })),
  };
}
