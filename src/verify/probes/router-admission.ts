/**
 * Whether the live NetworkPolicies selecting a template's pods admit the live router pods (case netpol-router-peer-mismatch). Both sides
 * are read from the cluster, never from the descriptor: the router pods are the ones behind the router's Service (its
 * `spec.selector`), or, with no Service, the pods in the router namespace carrying the declared labels; the template's
 * pods are its live pods (label `agents.x-k8s.io/sandbox-template-ref-hash`, `api/v1beta1/sandbox_types.go@v0.5.6`), or,
 * with none running, the labels the live SandboxTemplate gives them. NetworkPolicies only add, so the router is admitted
 * when no ingress policy selects the pod or when one rule of any selecting policy admits it on the runtime port. What
 * cannot be judged from labels (a namespace label the verifier did not read, a named port, an ipBlock without the
 * router pod's IP) is `undefined`: unknown, never admitted.
 */
import { nameHash } from '../../adapter/kubernetes/template-hash.js';
import type {
  ContainerStatusView,
  IngressPeerView,
  IngressRuleView,
  LabelSelectorView,
  NetworkPolicyView,
  ServiceView,
} from '../../adapter/kubernetes/views.js';
import type { Result } from '../../adapter/types.js';
import type { TemplatePlan } from '../plan.js';
import { reads, selector, type ProbeDeps } from './common.js';

/** Label every pod of a template carries: namehash of the template name (`extensions/controllers/utils.go@v0.5.6`). */
export const TEMPLATE_REF_HASH_LABEL = 'agents.x-k8s.io/sandbox-template-ref-hash';
/** The namespace label the API server sets on every namespace; the only namespace label the verifier knows unread. */
const NAMESPACE_NAME_LABEL = 'kubernetes.io/metadata.name';

/** True, false, or undefined when the live objects read do not tell. */
export type Tri = boolean | undefined;

/** A live router pod: where it runs and what it is labelled. */
export interface RouterPod {
  readonly name: string;
  readonly namespace: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly podIP?: string;
  /** Ready=True: the Service sends it traffic (set when read from a live pod). */
  readonly ready?: boolean;
  /** Container restarts, summed (set when read from a live pod). */
  readonly restarts?: number;
  /** The first waiting container's reason, e.g. `CrashLoopBackOff` (set when read from a live pod). */
  readonly waiting?: string;
}

const and = (a: Tri, b: Tri): Tri =>
  a === false || b === false ? false : a === undefined || b === undefined ? undefined : true;
const any = (xs: readonly Tri[]): Tri => (xs.includes(true) ? true : xs.includes(undefined) ? undefined : false);

/**
 * Whether `sel` selects `labels`; with `complete` false only the keys present are known, so a requirement on another
 * key gives undefined (an empty selector selects everything).
 */
export function selectsTri(
  sel: LabelSelectorView | undefined,
  labels: Readonly<Record<string, string>>,
  complete: boolean,
): Tri {
  const known = (k: string): boolean => complete || Object.prototype.hasOwnProperty.call(labels, k);
  const parts: Tri[] = [];
  for (const [k, v] of Object.entries(sel?.matchLabels ?? {})) parts.push(known(k) ? labels[k] === v : undefined);
  for (const e of sel?.matchExpressions ?? []) {
    if (!known(e.key)) {
      parts.push(undefined);
      continue;
    }
    const has = Object.prototype.hasOwnProperty.call(labels, e.key);
    const inValues = has && (e.values ?? []).includes(labels[e.key]!);
    if (e.operator === 'In') parts.push(inValues);
    else if (e.operator === 'NotIn') parts.push(!inValues);
    else if (e.operator === 'Exists') parts.push(has);
    else if (e.operator === 'DoesNotExist') parts.push(!has);
    else parts.push(undefined);
  }
  return parts.reduce<Tri>(and, true);
}

function ipv4(s: string): number | undefined {
  const m = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(s);
  if (!m) return undefined;
  const o = m.slice(1).map(Number);
  if (o.some((x) => x > 255)) return undefined;
  return ((o[0]! << 24) | (o[1]! << 16) | (o[2]! << 8) | o[3]!) >>> 0;
}

/** Whether IPv4 `ip` lies in `cidr`; undefined when either is not IPv4. */
export function inCidr(ip: string, cidr: string): Tri {
  const [net, bits] = cidr.split('/');
  const a = ipv4(ip);
  const b = ipv4(net ?? '');
  const n = Number(bits ?? '32');
  if (a === undefined || b === undefined || !Number.isInteger(n) || n < 0 || n > 32) return undefined;
  const mask = n === 0 ? 0 : (0xffffffff << (32 - n)) >>> 0;
  return (a & mask) >>> 0 === (b & mask) >>> 0;
}

/** Whether one `from` peer of a policy in `policyNs` admits `router`. */
export function peerAdmits(peer: IngressPeerView, policyNs: string, router: RouterPod): Tri {
  if (peer.ipBlock) {
    if (!router.podIP || !peer.ipBlock.cidr) return undefined;
    const inside = inCidr(router.podIP, peer.ipBlock.cidr);
    const excepted = any((peer.ipBlock.except ?? []).map((c) => inCidr(router.podIP!, c)));
    return and(inside, excepted === undefined ? undefined : !excepted);
  }
  const nsLabels = { [NAMESPACE_NAME_LABEL]: router.namespace };
  const nsMatch: Tri =
    peer.namespaceSelector === undefined
      ? router.namespace === policyNs
      : selectsTri(peer.namespaceSelector, nsLabels, false);
  const podMatch: Tri = peer.podSelector === undefined ? true : selectsTri(peer.podSelector, router.labels, true);
  return and(nsMatch, podMatch);
}

/** Whether a rule's ports include TCP `port` (no ports = every port; a named port cannot be resolved here). */
export function portAdmits(ports: IngressRuleView['ports'] | undefined, port: number): Tri {
  if (!ports || ports.length === 0) return true;
  return any(
    ports.map((p) => {
      if ((p.protocol ?? 'TCP') !== 'TCP') return false;
      if (p.port === undefined) return true;
      if (typeof p.port === 'string') return /^\d+$/.test(p.port) ? Number(p.port) === port : undefined;
      return p.endPort !== undefined ? port >= p.port && port <= p.endPort : p.port === port;
    }),
  );
}

/** Whether the ingress rules of one policy admit `router` on `port`. */
export function policyAdmits(policy: NetworkPolicyView, router: RouterPod, port: number): Tri {
  const ns = policy.meta.namespace ?? '';
  return any(
    policy.ingress.map((r) =>
      and(
        r.from === undefined || r.from.length === 0 ? true : any(r.from.map((p) => peerAdmits(p, ns, router))),
        portAdmits(r.ports, port),
      ),
    ),
  );
}

/** The admission of the router to one template's pods, with the policies that select them for ingress. */
export interface Admission {
  readonly verdict: 'admitted' | 'not-admitted' | 'unknown';
  /** `<ns>/<name>` of the ingress policies selecting the pods (none: ingress is not restricted). */
  readonly selecting: readonly string[];
  /** Router pods not admitted (not-admitted) or not judged (unknown). */
  readonly routerPods: readonly string[];
}

/** Judges every router pod against the ingress policies selecting pods labelled `podLabels` in `namespace` (pure). */
export function judgeAdmission(
  namespace: string,
  podLabels: Readonly<Record<string, string>>,
  policies: readonly NetworkPolicyView[],
  routers: readonly RouterPod[],
  port: number,
): Admission {
  const selecting = policies.filter(
    (p) => p.meta.namespace === namespace && p.restrictsIngress && selectsTri(p.podSelector, podLabels, true) === true,
  );
  const names = selecting.map((p) => `${p.meta.namespace}/${p.meta.name}`);
  if (selecting.length === 0) return { verdict: 'admitted', selecting: [], routerPods: [] };
  const per = routers.map((r) => ({ r, v: any(selecting.map((p) => policyAdmits(p, r, port))) }));
  const denied = per.filter((x) => x.v === false).map((x) => `${x.r.namespace}/${x.r.name}`);
  if (denied.length > 0) return { verdict: 'not-admitted', selecting: names, routerPods: denied };
  const unsure = per.filter((x) => x.v === undefined).map((x) => `${x.r.namespace}/${x.r.name}`);
  if (unsure.length > 0) return { verdict: 'unknown', selecting: names, routerPods: unsure };
  return { verdict: 'admitted', selecting: names, routerPods: [] };
}

/** The live router pods: behind the live Service's selector, else those carrying the declared labels; `via` says which. */
export async function liveRouterPods(
  deps: ProbeDeps,
  service: ServiceView | undefined,
): Promise<Result<{ pods: RouterPod[]; via: string }>> {
  const router = deps.plan.router!;
  const bySelector = service !== undefined && Object.keys(service.selector).length > 0;
  const labels = bySelector ? service.selector : router.podLabels;
  const via = bySelector
    ? `pods behind Service ${router.namespace}/${router.service} (selector ${selector(labels)})`
    : `pods ${selector(labels)} in ${router.namespace} (no Service selector to follow)`;
  const r = await reads(deps).pods(router.namespace, selector(labels));
  if (r.kind !== 'ok') return r;
  const pods = r.value
    .filter((p) => !p.meta.deleting)
    .map((p) => ({
      name: p.meta.name,
      namespace: p.meta.namespace ?? router.namespace,
      labels: p.meta.labels,
      ...(p.ip ? { podIP: p.ip } : {}),
      ready: p.ready,
      restarts: p.containerStatuses.reduce((n, c) => n + c.restarts, 0),
      ...waitingReason(p.containerStatuses),
    }));
  return { kind: 'ok', value: { pods, via } };
}

function waitingReason(statuses: readonly ContainerStatusView[]): { waiting?: string } {
  const w = statuses.find((c) => c.waiting !== undefined)?.waiting;
  return w !== undefined ? { waiting: w } : {};
}

/** The labels of a template's pods as live: a live pod's, else those the live SandboxTemplate gives its pods. */
export async function liveTemplatePodLabels(
  deps: ProbeDeps,
  t: TemplatePlan,
): Promise<Result<{ labels: Readonly<Record<string, string>>; source: string } | undefined>> {
  const hash = nameHash(t.name);
  const read = reads(deps);
  const pods = await read.pods(t.namespace, `${TEMPLATE_REF_HASH_LABEL}=${hash}`);
  if (pods.kind !== 'ok') return pods;
  const pod = pods.value.find((p) => !p.meta.deleting);
  if (pod) return { kind: 'ok', value: { labels: pod.meta.labels, source: `pod ${t.namespace}/${pod.meta.name}` } };
  const tmpl = await read.template(t.namespace, t.name);
  if (tmpl.kind !== 'ok') return tmpl;
  if (!tmpl.value) return { kind: 'ok', value: undefined };
  return {
    kind: 'ok',
    value: {
      labels: { ...tmpl.value.podLabels, [TEMPLATE_REF_HASH_LABEL]: hash },
      source: `SandboxTemplate ${t.namespace}/${t.name} (no live pod; the labels it gives its pods)`,
    },
  };
}
