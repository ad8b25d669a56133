/**
 * Whether the node killed a session's container for memory during a call. A container killed for memory takes its
 * runtime with it, so the call itself only sees a closed connection (direct, port-forward) or a router 502; the pod's
 * container status says what happened: `state.terminated` or, once the kubelet restarted it, `lastState.terminated`
 * with reason `OOMKilled` and exit code 137. Only a termination of the pod the call went to (same UID as when the call
 * started) that ended after the call started counts.
 */
import { quantityValue } from '../kubernetes/blueprint.js';
import type { PodView } from '../kubernetes/views.js';
import type { ExecutionOutcome } from '../types.js';
import type { RuntimeTarget } from '../transports/types.js';

/** Reads a pod; undefined when it does not exist. */
export type PodRead = (namespace: string, name: string) => Promise<PodView | undefined>;

export type OomKilled = Extract<ExecutionOutcome, { kind: 'oom-killed' }>;

/** The kubelet writes `finishedAt` in whole seconds, and the node's clock is not the adapter's: this much earlier counts. */
const FINISHED_SLACK_MS = 2_000;
/** How long, and how often, the pod is read after a lost call: the kubelet reports a dead container within seconds. */
export const OOM_SETTLE_MS = 10_000;
const OOM_POLL_MS = 500;

/** The pod a call goes to: the target's pod name, else the Sandbox's (upstream names the pod after the Sandbox). */
export function podNameOf(target: RuntimeTarget): string {
  return target.podName ?? target.sandboxName;
}

/** Endings that can hide a container killed with its runtime: the connection closed, or the runtime call failed. */
export function mayHideOomKill(o: ExecutionOutcome): boolean {
  return o.kind === 'transport-closed' || (o.kind === 'runtime-error' && o.reason === 'RuntimeCallFailed');
}

/** The OOM kill of a container of `pod` (UID `podUid`) that ended at or after `sinceMs`, if any (pure). */
export function oomKillOf(pod: PodView, podUid: string, sinceMs: number): OomKilled | undefined {
  if (pod.meta.uid !== podUid) return undefined;
  for (const cs of pod.containerStatuses) {
    for (const t of [cs.terminated, cs.lastTerminated]) {
      if (t?.reason !== 'OOMKilled' || (t.finishedAtMs ?? 0) < sinceMs - FINISHED_SLACK_MS) continue;
      const limit = pod.containers.find((c) => c.name === cs.name)?.memoryLimit;
      const limitBytes = limit === undefined ? undefined : quantityValue(limit);
      return {
        kind: 'oom-killed',
        reason: 'RuntimeOOMKilled',
        layer: 'node',
        exitCode: t.exitCode,
        container: cs.name,
        podUid,
        ...(limitBytes !== undefined ? { memoryLimitBytes: limitBytes } : {}),
        message: `the node killed container ${cs.name} of pod ${pod.meta.namespace}/${pod.meta.name} for memory (OOMKilled, exit ${t.exitCode}${limit !== undefined ? `, limit ${limit}` : ', no memory limit'})`,
      };
    }
  }
  return undefined;
}

/**
 * Reads the pod until it shows an OOM kill since `sinceMs` (then that outcome), it is gone or replaced, or
 * {@link OOM_SETTLE_MS} passed (then undefined: the original ending stands). A failed read ends the wait.
 */
export async function awaitOomKill(
  read: PodRead,
  target: RuntimeTarget,
  podUid: string,
  sinceMs: number,
): Promise<OomKilled | undefined> {
  const until = Date.now() + OOM_SETTLE_MS;
  for (;;) {
    const pod = await read(target.namespace, podNameOf(target)).catch(() => undefined);
    if (!pod || pod.meta.uid !== podUid) return undefined;
    const killed = oomKillOf(pod, podUid, sinceMs);
    if (killed || Date.now() >= until) return killed;
    await new Promise((r) => setTimeout(r, OOM_POLL_MS));
  }
}
