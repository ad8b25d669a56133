/**
 * Warning events of a probe pod that never got Ready, folded per reason and node (case 12: FailedCreatePodSandBox
 * events are reported per node). The kubelet records sandbox-creation failures as core/v1 Events on the Pod with
 * `source.host` = its node (events written through events.k8s.io/v1 carry the node in `reportingInstance`) and
 * repeats them on every retry, either as new Events or by raising `count` / `series.count`
 * (`staging/src/k8s.io/api/core/v1/types.go`, `staging/src/k8s.io/api/events/v1/types.go`, k8s 1.36).
 */
import type { Obj } from '../../adapter/kubernetes/cluster.js';
import type { ProbeDeps } from './common.js';

/** One reason on one node: how often it was recorded and its newest message. */
export interface PodWarning {
  readonly reason: string;
  /** `source.host`, else `reportingInstance`; undefined when the event names no node (e.g. FailedScheduling). */
  readonly node?: string;
  /** Occurrences: the sum over the folded events of `count`, else `series.count`, else 1. */
  readonly count: number;
  /** Message of the newest folded event (by lastTimestamp / series.lastObservedTime / eventTime / creationTimestamp), at most 200 characters. */
  readonly message: string;
}

interface EventView {
  type?: string;
  reason?: string;
  message?: string;
  count?: number;
  series?: { count?: number; lastObservedTime?: string };
  source?: { host?: string };
  reportingInstance?: string;
  lastTimestamp?: string;
  eventTime?: string;
  metadata?: { creationTimestamp?: string | Date };
}

function when(e: EventView): number {
  const t = e.lastTimestamp ?? e.series?.lastObservedTime ?? e.eventTime ?? e.metadata?.creationTimestamp;
  const ms = t === undefined ? NaN : new Date(t).getTime();
  return Number.isNaN(ms) ? 0 : ms;
}

/**
 * Folds events into one {@link PodWarning} per (reason, node), Warning events only, in order of first appearance
 * (oldest first). Pure.
 */
export function foldPodWarnings(events: readonly Obj[]): PodWarning[] {
  const groups = new Map<string, { reason: string; node?: string; count: number; newest: EventView }>();
  const sorted = [...(events as readonly EventView[])].filter((e) => e.type === 'Warning').sort((a, b) => when(a) - when(b));
  for (const e of sorted) {
    const reason = e.reason ?? '?';
    const node = e.source?.host || e.reportingInstance || undefined;
    const key = `${reason}\u0000${node ?? ''}`;
    const n = e.count ?? e.series?.count ?? 1;
    const g = groups.get(key);
    if (g) {
      g.count += n;
      g.newest = e;
    } else groups.set(key, { reason, ...(node ? { node } : {}), count: n, newest: e });
  }
  return [...groups.values()].map((g) => ({ reason: g.reason, ...(g.node ? { node: g.node } : {}), count: g.count, message: (g.newest.message ?? '').trim().slice(0, 200) }));
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
  const r = await deps.cluster.events(namespace, `involvedObject.kind=Pod,involvedObject.name=${pod}`);
  return r.kind === 'ok' ? foldPodWarnings(r.value) : [];
}
