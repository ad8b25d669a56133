/**
 * Warning events of a probe pod that never got Ready, folded per reason and node (case gvisor-runtimeclass-unschedulable: FailedCreatePodSandBox
 * events are reported per node). The kubelet records sandbox-creation failures as core/v1 Events on the Pod with
 * `source.host` = its node (events written through events.k8s.io/v1 carry it in `reportingInstance`, with
 * `reportingController` — `reportingComponent` in core/v1 — `kubelet`) and
 * repeats them on every retry, either as new Events or by raising `count` / `series.count`
 * (`staging/src/k8s.io/api/core/v1/types.go`, `staging/src/k8s.io/api/events/v1/types.go`, k8s 1.36).
 */
import type { EventView } from '../../adapter/kubernetes/views.js';
import type { TemplatePlan } from '../plan.js';
import { reads, type Facts, type ProbeDeps } from './common.js';

/** One reason on one node: how often it was recorded and its newest message. */
export interface PodWarning {
  /** The Events' `reason` (e.g. `FailedMount`), copied as is: an upstream code, not one of AgentPlane's. */
  readonly reason: string;
  /** `source.host`, else the kubelet's `reportingInstance`; undefined when the event names no node (e.g. FailedScheduling). */
  readonly node?: string;
  /** Occurrences: the sum over the folded events of `count`, else `series.count`, else 1. */
  readonly count: number;
  /**
   * Message of the newest folded event (by lastTimestamp / series.lastObservedTime / eventTime / creationTimestamp), at
   * most 320 characters: a longer one keeps its start and its end (where containerd names the cause) around ` … `.
   */
  readonly message: string;
}

const MAX_MESSAGE = 320;

function shorten(message: string): string {
  if (message.length <= MAX_MESSAGE) return message;
  const half = Math.floor((MAX_MESSAGE - 3) / 2);
  return `${message.slice(0, half)} … ${message.slice(message.length - (MAX_MESSAGE - 3 - half))}`;
}

/**
 * Folds events into one {@link PodWarning} per (reason, node), Warning events only, in order of first appearance
 * (oldest first). Pure.
 */
export function foldPodWarnings(events: readonly EventView[]): PodWarning[] {
  const groups = new Map<string, { reason: string; node?: string; count: number; newest: EventView }>();
  const sorted = events.filter((e) => e.type === 'Warning').sort((a, b) => a.at - b.at);
  for (const e of sorted) {
    const reason = e.reason ?? '?';
    const node = e.node;
    const key = `${reason}\u0000${node ?? ''}`;
    const n = e.count;
    const g = groups.get(key);
    if (g) {
      g.count += n;
      g.newest = e;
    } else groups.set(key, { reason, ...(node ? { node } : {}), count: n, newest: e });
  }
  return [...groups.values()].map((g) => ({
    reason: g.reason,
    ...(g.node ? { node: g.node } : {}),
    count: g.count,
    message: shorten((g.newest.message ?? '').trim()),
  }));
}

/** `Reason on <node> (N times): message`; the node part is left out when the event names none, the count when 1. */
export function describeWarning(w: PodWarning): string {
  return `${w.reason}${w.node ? ` on ${w.node}` : ''}${w.count > 1 ? ` (${w.count} times)` : ''}: ${w.message}`;
}

/**
 * Warning events of Pod `namespace/pod`, folded ({@link foldPodWarnings}). A failed list call gives [] (the caller's
 * evidence already says the pod never got Ready; events only explain why).
 */
export async function podWarnings(deps: ProbeDeps, namespace: string, pod: string): Promise<PodWarning[]> {
  const r = await reads(deps).events(namespace, `involvedObject.kind=Pod,involvedObject.name=${pod}`);
  return r.kind === 'ok' ? foldPodWarnings(r.value) : [];
}

/** FailedCreatePodSandBox on one node, over the pods of one RuntimeClass there. */
export interface NodeSandboxFailure {
  readonly node: string;
  /** Names of the pods the events are about, in order of first failure. */
  readonly pods: readonly string[];
  /** Occurrences summed over those pods' events (`count`, else `series.count`, else 1). */
  readonly count: number;
  /** The newest event's message, shortened as in {@link PodWarning}. */
  readonly message: string;
}

/**
 * Folds FailedCreatePodSandBox events about the pods named in `pods` into one {@link NodeSandboxFailure} per node (the
 * event's `source.host`, else the kubelet's `reportingInstance`; `?` when it names none), in order of first failure. Pure.
 */
export function sandboxFailuresByNode(events: readonly EventView[], pods: ReadonlySet<string>): NodeSandboxFailure[] {
  const byNode = new Map<string, { pods: string[]; count: number; newest: EventView }>();
  const sorted = events
    .filter(
      (e) =>
        e.type === 'Warning' &&
        e.reason === 'FailedCreatePodSandBox' &&
        e.involvedObject?.kind === 'Pod' &&
        pods.has(e.involvedObject.name ?? ''),
    )
    .sort((a, b) => a.at - b.at);
  for (const e of sorted) {
    const node = e.node ?? '?';
    const pod = e.involvedObject!.name!;
    const g = byNode.get(node) ?? { pods: [], count: 0, newest: e };
    if (!g.pods.includes(pod)) g.pods.push(pod);
    g.count += e.count;
    g.newest = e;
    byNode.set(node, g);
  }
  return [...byNode.entries()].map(([node, g]) => ({
    node,
    pods: g.pods,
    count: g.count,
    message: shorten((g.newest.message ?? '').trim()),
  }));
}

/**
 * Where pods under RuntimeClass `runtimeClass` in `namespace` could not get a sandbox: lists the namespace's pods
 * (those with `spec.runtimeClassName` = it, plus `alsoPod` — the probe pod — whatever it names) and its
 * FailedCreatePodSandBox events, folded per node ({@link sandboxFailuresByNode}). When the pod list fails only `alsoPod`
 * is looked at; when the event list fails the answer is [] (the caller's evidence already says the pod never got Ready).
 */
export async function runtimeClassSandboxFailures(
  deps: ProbeDeps,
  namespace: string,
  runtimeClass: string,
  alsoPod: string,
): Promise<NodeSandboxFailure[]> {
  const names = new Set([alsoPod]);
  const read = reads(deps);
  const pods = await read.pods(namespace);
  if (pods.kind === 'ok') {
    for (const p of pods.value) if (p.runtimeClassName === runtimeClass) names.add(p.meta.name);
  }
  const r = await read.events(namespace, 'involvedObject.kind=Pod,reason=FailedCreatePodSandBox');
  return r.kind === 'ok' ? sandboxFailuresByNode(r.value, names) : [];
}

/**
 * Case gvisor-runtimeclass-unschedulable: one `missing` line per node where pods under the template's RuntimeClass in its namespace (the probe pod and
 * its siblings, such as warm-pool members) could not get a sandbox (FailedCreatePodSandBox), so the class is not
 * verified while it fails on some node.
 */
export async function nodeFailureEvidence(
  deps: ProbeDeps,
  rc: Facts,
  template: Pick<TemplatePlan, 'namespace' | 'runtimeClassName'>,
  probePod: string,
): Promise<void> {
  for (const f of await runtimeClassSandboxFailures(deps, template.namespace, template.runtimeClassName!, probePod)) {
    const who =
      f.pods.length === 1
        ? `pod ${template.namespace}/${f.pods[0]}`
        : `${f.pods.length} pods (${f.pods.map((p) => `${template.namespace}/${p}`).join(', ')})`;
    rc.add(
      'verified',
      'missing',
      `Node ${f.node}`,
      'FailedCreatePodSandBox',
      `${who} could not start on node ${f.node} under RuntimeClass ${template.runtimeClassName}: FailedCreatePodSandBox${f.count > 1 ? ` (${f.count} times)` : ''}: ${f.message}`,
      { field: 'events[reason=FailedCreatePodSandBox]', value: f.message, observed: { events: f.count } },
    );
  }
}
