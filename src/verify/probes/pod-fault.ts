/**
 * Permanent pod errors during a wait (case test-node-runsc-registration): a pod whose RuntimeClass handler the node's
 * container runtime does not know gets `FailedCreatePodSandBox` on every kubelet retry with the same cause, so waiting
 * for it to become Ready only spends the ready timeout. A wait polls its pods' FailedCreatePodSandBox events beside
 * its watch and ends at the first permanent one. Permanent = the runtime names the handler as unknown: containerd
 * `failed to get sandbox runtime: no runtime for "<h>" is configured` (`internal/cri/server/podsandbox/…`, containerd
 * 2.x), CRI-O `no such runtime handler`/`RuntimeHandler "<h>" not supported`. Other sandbox failures (CNI not ready,
 * an image pull) can clear up and are left to the ready timeout.
 */
import { sleep } from '../../adapter/kubernetes/cluster.js';
import type { EventView } from '../../adapter/kubernetes/views.js';
import { reads, type ProbeDeps } from './common.js';
import { sandboxFailuresByNode, type NodeSandboxFailure } from './pod-events.js';

const PERMANENT_CAUSES = [
  /no runtime for "[^"]*" is configured/,
  /RuntimeHandler "[^"]*" not supported/i,
  /no such runtime handler/i,
  /unknown runtime handler/i,
];

/** Between event reads while a wait runs: at most one list call per interval beside the wait's own watch. */
export const POD_FAULT_POLL_MS = 2_000;

/** Whether a FailedCreatePodSandBox message says the handler is unknown to the node's runtime. Pure. */
export function permanentSandboxCause(message: string): boolean {
  return PERMANENT_CAUSES.some((re) => re.test(message));
}

/** The first node where one of `pods` got a permanent FailedCreatePodSandBox, folded per node. Pure. */
export function permanentPodFault(
  events: readonly EventView[],
  pods: ReadonlySet<string>,
): NodeSandboxFailure | undefined {
  return sandboxFailuresByNode(
    events.filter((e) => permanentSandboxCause(e.message ?? '')),
    pods,
  )[0];
}

/** A running poll: `signal` aborts once a permanent fault is seen (or the parent aborts); `stop()` ends it. */
export interface PodFaultWatch {
  readonly signal: AbortSignal;
  /** Ends the poll and gives the permanent fault it saw, if any. */
  stop(): Promise<NodeSandboxFailure | undefined>;
}

/**
 * Polls the FailedCreatePodSandBox events of `namespace` every {@link POD_FAULT_POLL_MS} for the pods `pods()` names
 * now (the names may become known during the wait); a failed list is skipped (the wait's own verdict stands). Never
 * rejects.
 */
export function watchPodFaults(
  deps: ProbeDeps,
  namespace: string,
  pods: () => readonly string[],
  parent: AbortSignal,
  intervalMs = POD_FAULT_POLL_MS,
): PodFaultWatch {
  const found = new AbortController();
  const done = new AbortController();
  const signal = AbortSignal.any([parent, found.signal]);
  const until = AbortSignal.any([signal, done.signal]);
  const run = (async (): Promise<NodeSandboxFailure | undefined> => {
    while (await sleep(intervalMs, until)) {
      const names = new Set(pods());
      if (names.size === 0) continue;
      const r = await reads(deps)
        .events(namespace, 'involvedObject.kind=Pod,reason=FailedCreatePodSandBox')
        .catch(() => undefined);
      const fault = r?.kind === 'ok' ? permanentPodFault(r.value, names) : undefined;
      if (fault) {
        found.abort();
        return fault;
      }
    }
    return undefined;
  })();
  return {
    signal,
    async stop() {
      done.abort();
      return run;
    },
  };
}

/** `pod x could not get a sandbox on node n (k times): <message>` for a readiness `why`. */
export function describePodFault(namespace: string, f: NodeSandboxFailure): string {
  const who = f.pods.map((p) => `${namespace}/${p}`).join(', ');
  return `pod ${who} can never start on node ${f.node}: FailedCreatePodSandBox${f.count > 1 ? ` (${f.count} times)` : ''}, a permanent cause: ${f.message}`;
}
