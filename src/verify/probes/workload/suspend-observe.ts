/**
 * What counts as seeing a probe Sandbox suspended, and resumed, judged only at the Sandbox's current generation (case
 * suspended-condition-stale: a Suspended condition left from an older generation says nothing). Pure.
 *
 * Suspended (`controllers/sandbox_controller.go@{v0.4.6,v0.5.0,v0.5.6}`): v0.5 `Suspended=True` (reason
 * `PodTerminated`) at the current generation; v0.4.6 has no Suspended condition and reports Ready=True with replicas 0,
 * so there the current-generation Ready condition only shows the controller saw `replicas: 0`. On both the pod is
 * checked gone by name: v0.5.0 and v0.4.6 report the suspension as soon as the delete is sent, while the pod still
 * terminates. Resumed: Ready=True at the current generation, pod IPs, and a pod that is Ready with a UID other than the
 * one before suspension (the controller makes a new pod from `spec.podTemplate`).
 */
import type { NodeView, PodView, SandboxView } from '../../../adapter/kubernetes/views.js';
import { isBetaFamily } from '../../../model/releases.js';
import type { ReleaseFamily } from '../../../releases/index.js';

/** The Sandbox's pod as read by name: gone (404), present, or not readable. */
export type PodSeen =
  | { readonly kind: 'gone' }
  | { readonly kind: 'present'; readonly pod: PodView }
  | { readonly kind: 'unread'; readonly why: string };

export interface Judged {
  readonly done: boolean;
  /** What was seen, in words (the evidence `value` when the wait ends without `done`). */
  readonly seen: string;
  /** Resume only: Ready at the current generation, but the pod is the one from before suspension. */
  readonly samePod?: boolean;
}

function podText(p: PodSeen): string {
  if (p.kind === 'gone') return 'pod gone';
  if (p.kind === 'unread') return `pod not readable (${p.why})`;
  return `pod ${p.pod.meta.name} uid ${p.pod.meta.uid ?? '?'}${p.pod.meta.deleting ? ' terminating' : ''}${p.pod.ready ? ' Ready' : ''}`;
}

/** Whether Sandbox `sb` (release `family`) is seen suspended with its pod `pod` gone. */
export function judgeSuspended(sb: SandboxView, family: ReleaseFamily, pod: PodSeen): Judged {
  const g = sb.meta.generation;
  let status: Judged;
  if (isBetaFamily(family)) {
    const s = sb.condition('Suspended');
    status =
      s.value === 'true'
        ? { done: true, seen: `Suspended=True/${s.reason} at generation ${g}` }
        : { done: false, seen: s.value === 'unknown' ? s.reason : `Suspended=False/${s.reason} at generation ${g}` };
  } else {
    const r = sb.condition('Ready');
    status =
      r.value !== 'unknown' && sb.phase.phase === 'Suspended'
        ? { done: true, seen: `${sb.phase.message}; Ready/${r.reason} at generation ${g}` }
        : { done: false, seen: r.value === 'unknown' ? r.reason : sb.phase.message };
  }
  const ips = sb.podIPs.length > 0 ? `; pod IPs ${sb.podIPs.join(',')}` : '';
  const seen = `${status.seen}; ${podText(pod)}${ips}`;
  return { done: status.done && pod.kind === 'gone' && sb.podIPs.length === 0, seen };
}

/** Whether Sandbox `sb` is seen resumed: Ready at its current generation, with a Ready pod whose UID is not `oldUid`. */
export function judgeResumed(sb: SandboxView, pod: PodSeen, oldUid: string): Judged {
  const g = sb.meta.generation;
  const ready = sb.phase.phase === 'Ready' && sb.podIPs.length > 0;
  const seen = `${ready ? `Ready=True at generation ${g}` : sb.phase.message}; ${podText(pod)}`;
  if (!ready || pod.kind !== 'present' || !pod.pod.ready || pod.pod.meta.deleting) return { done: false, seen };
  if (pod.pod.meta.uid === undefined) return { done: false, seen };
  if (pod.pod.meta.uid === oldUid) return { done: false, seen, samePod: true };
  return { done: true, seen };
}

/**
 * The container runtime of `node` when it cannot have run a container: kwok's (`kwok-…`, pod status only), or none
 * reported, or no such node; undefined for a node with a container runtime.
 */
export function simulatedRuntime(node: NodeView | undefined): string | undefined {
  if (node === undefined) return '';
  const v = node.containerRuntimeVersion ?? '';
  return v === '' || v.startsWith('kwok') ? v : undefined;
}
