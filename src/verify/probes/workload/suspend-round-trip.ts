/**
 * The `suspend-resume` round trip on this run's probe sandbox of one template, once its workload probe proved the
 * runtime: a nonce file written through the runtime's file API, suspend through the adapter (`setSuspended`: v0.5
 * `spec.operatingMode`, v0.4 `spec.replicas`), the suspension seen at the current generation with the pod gone, resume,
 * Ready at the current generation with a new pod UID, the runtime proof of runtime-exec again on the new pod, and the
 * workspace checked against what the release keeps (suspend-observe.ts; the adapter's workspace.ts).
 *
 * Every step not observed leaves `verified` below: `unknown` for what was not seen in time or could not be asked,
 * `missing` for an observation that contradicts the round trip (same pod after resume, the kept workspace lost).
 */
import { KubeSessions } from '../../../adapter/kubernetes/sessions.js';
import type { SandboxView } from '../../../adapter/kubernetes/views.js';
import type { CapabilityName } from '../../../adapter/types.js';
import { isBetaFamily } from '../../../model/releases.js';
import { formatMs, type Evidence } from '../../evidence.js';
import { sampleSize, type TemplatePlan } from '../../plan.js';
import type { Probe, ProbeRun } from '../../runner.js';
import type { RuntimeTarget } from '../../runtime-prober.js';
import { Facts, reads, type ProbeDeps } from '../common.js';
import { describePodFault, watchPodFaults } from '../pod-fault.js';
import type { ProbeSandboxes } from './handoff.js';
import { judgeResumed, judgeSuspended, simulatedRuntime, type Judged, type PodSeen } from './suspend-observe.js';
import { afterResume } from './suspend-after-resume.js';

const CAPABILITY: CapabilityName = 'suspend-resume';
/** Pause between reads of the pod while the Sandbox already shows the state waited for. */
const POD_POLL_MS = 500;

/** The round trip for `template`, after `after` (its workload probe and every probe using that probe sandbox). */
export function suspendRoundTripProbe(
  deps: ProbeDeps,
  template: TemplatePlan,
  sandboxes: ProbeSandboxes,
  after: readonly string[],
): Probe {
  return {
    id: `suspend-resume/${template.namespace}/${template.name}`,
    after,
    covers: [CAPABILITY],
    timeoutStep: 'verified',
    deadlineMs: 2 * deps.plan.readyTimeoutMs + (sampleSize(deps.plan) + 4) * deps.plan.probeTimeoutMs + 15_000,
    run: (ctx) => roundTrip(deps, template, sandboxes, ctx),
  };
}

async function roundTrip(
  deps: ProbeDeps,
  template: TemplatePlan,
  sandboxes: ProbeSandboxes,
  ctx: ProbeRun,
): Promise<Evidence[]> {
  const f = new Facts(CAPABILITY);
  const handed = sandboxes.get(template.namespace, template.name);
  const oldUid = handed?.sandbox.pod?.meta.uid;
  if (!handed || !handed.runtimeOk || oldUid === undefined) {
    const why = !handed
      ? 'no Ready probe sandbox'
      : !handed.runtimeOk
        ? `the runtime of ${handed.sandbox.name} did not answer (runtime-exec not verified)`
        : `the pod of ${handed.sandbox.name} was not read`;
    return f.add(
      'verified',
      'unknown',
      `template ${template.namespace}/${template.name}`,
      'SuspendNotTried',
      `no round trip: ${why}`,
    ).list;
  }
  const { sandbox: sb } = handed;
  const ns = template.namespace;
  const subject = `Sandbox ${ns}/${sb.name}`;
  const path = `.agentplane-suspend-${deps.workload.runId}`;
  const nonce = `agentplane-suspend ${deps.workload.runId} ${Math.random().toString(36).slice(2, 10)}`;
  const wrote = await deps.runtime.fileRoundTrip(sb.target, path, nonce, deps.plan.probeTimeoutMs);

  const sessions = new KubeSessions(deps.cluster.client);
  ctx.note(`suspending probe Sandbox ${ns}/${sb.name} (pod uid ${oldUid})`);
  const down = await sessions.setSuspended(ns, sb.name, true);
  if (down.kind !== 'ok') return f.failedCall('verified', `suspend ${subject}`, down).list;
  const suspended = await waitUntil(deps, ns, sb.name, ctx, {
    sandboxDone: (v) => judgeSuspended(v, deps.facts.family, { kind: 'gone' }).done,
    podName: () => sb.target.pod,
    judge: (v, pod) => judgeSuspended(v, deps.facts.family, pod),
  });
  if (suspended.kind !== 'done')
    return f.add('verified', 'unknown', subject, 'SuspendNotObserved', `not seen suspended: ${suspended.why}`, {
      value: suspended.seen,
      durationMs: suspended.waitedMs,
    }).list;
  f.proven(
    'verified',
    subject,
    'SuspendObserved',
    `suspended after ${formatMs(suspended.waitedMs)}: ${suspended.seen}`,
    {
      field: isBetaFamily(deps.facts.family) ? 'status.conditions[Suspended]' : 'spec.replicas',
      value: isBetaFamily(deps.facts.family) ? 'True' : '0',
      durationMs: suspended.waitedMs,
    },
  );

  ctx.note(`resuming probe Sandbox ${ns}/${sb.name}`);
  const up = await sessions.setSuspended(ns, sb.name, false);
  if (up.kind !== 'ok') return f.failedCall('verified', `resume ${subject}`, up).list;
  let podName = sb.target.pod;
  const resumed = await waitUntil(deps, ns, sb.name, ctx, {
    sandboxDone: (v) => v.phase.phase === 'Ready' && v.podIPs.length > 0,
    podName: (v) => (podName = v.podName),
    judge: (v, pod) => judgeResumed(v, pod, oldUid),
  });
  if (resumed.kind !== 'done') {
    if (resumed.samePod)
      return f.add('verified', 'missing', subject, 'ResumeSamePod', `Ready after resume, but ${resumed.seen}`, {
        field: 'pod uid',
        value: oldUid,
      }).list;
    return f.add('verified', 'unknown', subject, 'ResumeNotObserved', `not seen resumed: ${resumed.why}`, {
      value: resumed.seen,
      durationMs: resumed.waitedMs,
    }).list;
  }
  const pod = resumed.pod;
  f.proven('verified', subject, 'ResumeObserved', `resumed after ${formatMs(resumed.waitedMs)}: ${resumed.seen}`, {
    field: 'pod uid',
    value: `${oldUid} -> ${pod.uid}`,
    durationMs: resumed.waitedMs,
  });
  await nodeEvidence(deps, f, subject, pod.node);

  const ip = pod.ip ?? resumed.view.podIPs[0];
  const t = sb.target;
  const target: RuntimeTarget = {
    kind: t.kind,
    transport: t.transport,
    namespace: t.namespace,
    sandbox: t.sandbox,
    pod: podName,
    ...(pod.uid ? { podUid: pod.uid } : {}),
    restPort: t.restPort,
    ...(t.grpcPort !== undefined ? { grpcPort: t.grpcPort } : {}),
    ...(ip ? { podIP: ip } : {}),
  };
  await afterResume(
    deps,
    template,
    f,
    resumed.view,
    target,
    { path, nonce, wrote },
    { signal: ctx.signal, podState: `pod ${podName} uid ${pod.uid} after resume` },
  );
  return f.list;
}

/**
 * The resumed pod must have run somewhere a container is stopped and started: a node whose container runtime is a
 * simulator (kwok sets only pod status; no container ever runs) cannot show that, so `verified` stays below there.
 */
async function nodeEvidence(deps: ProbeDeps, f: Facts, subject: string, node: string | undefined): Promise<void> {
  const nodes = await reads(deps).nodes();
  if (nodes.kind !== 'ok') {
    f.failedCall('verified', `node of the resumed pod of ${subject}`, nodes);
    return;
  }
  const runtime = simulatedRuntime(nodes.value.find((n) => n.meta.name === node));
  if (runtime !== undefined)
    f.add(
      'verified',
      'unknown',
      subject,
      'PodSimulated',
      `the resumed pod is on node ${node ?? '?'}, whose container runtime is ${runtime || 'not reported'}: no container was stopped or started`,
      { field: 'status.nodeInfo.containerRuntimeVersion', value: runtime },
    );
}

type Waited =
  | {
      readonly kind: 'done';
      readonly view: SandboxView;
      readonly pod: { readonly uid: string; readonly ip?: string; readonly node?: string };
      readonly seen: string;
      readonly waitedMs: number;
    }
  | {
      readonly kind: 'not';
      readonly why: string;
      readonly seen: string;
      readonly waitedMs: number;
      readonly samePod?: boolean;
    };

/**
 * Waits as {@link waitWatched} does, ended early when the Sandbox's pod gets a permanent FailedCreatePodSandBox
 * (pod-fault.ts): a resumed pod whose handler the node lacks never starts, so the ready timeout is not spent on it.
 */
async function waitUntil(
  deps: ProbeDeps,
  ns: string,
  name: string,
  ctx: ProbeRun,
  how: Parameters<typeof waitWatched>[4],
): Promise<Waited> {
  let pod: string | undefined;
  const faults = watchPodFaults(deps, ns, () => (pod ? [pod] : []), ctx.signal);
  const r = await waitWatched(deps, ns, name, ctx, how, faults.signal, (p) => (pod = p));
  const fault = await faults.stop();
  return fault && r.kind === 'not' ? { ...r, why: describePodFault(ns, fault) } : r;
}

/**
 * Watches the Sandbox until `sandboxDone`, then reads its pod by name and judges both; while the pod is not there yet
 * (or still there), reads again every {@link POD_POLL_MS}. Bounded by the plan's ready timeout.
 */
async function waitWatched(
  deps: ProbeDeps,
  ns: string,
  name: string,
  ctx: ProbeRun,
  how: {
    sandboxDone: (sb: SandboxView) => boolean;
    podName: (sb: SandboxView) => string;
    judge: (sb: SandboxView, pod: PodSeen) => Judged;
  },
  signal: AbortSignal,
  onPod: (name: string) => void,
): Promise<Waited> {
  const started = Date.now();
  const limit = deps.plan.readyTimeoutMs;
  const read = reads(deps);
  let seen = 'no status read yet';
  for (;;) {
    const left = limit - (Date.now() - started);
    const w = await read.waitSandbox(
      ns,
      name,
      (sb) => {
        if (sb) onPod(how.podName(sb));
        return sb !== undefined && how.sandboxDone(sb);
      },
      { timeoutMs: Math.max(0, left), signal, progress: ctx.note },
    );
    const waitedMs = Date.now() - started;
    if (w.kind === 'failed')
      return { kind: 'not', why: `watching the Sandbox failed: ${w.error.message}`, seen, waitedMs };
    if (w.kind === 'timeout') {
      if (w.last) seen = how.judge(w.last, { kind: 'unread', why: 'not read: the Sandbox never got there' }).seen;
      const why = signal.aborted ? 'interrupted' : `not within ${formatMs(limit)}`;
      return { kind: 'not', why, seen, waitedMs };
    }
    const podR = await read.pod(ns, how.podName(w.view));
    const pod: PodSeen =
      podR.kind !== 'ok'
        ? { kind: 'unread', why: podR.kind === 'failed' ? podR.error.message : podR.kind }
        : podR.value === undefined
          ? { kind: 'gone' }
          : { kind: 'present', pod: podR.value };
    const j = how.judge(w.view, pod);
    seen = j.seen;
    if (j.done && pod.kind === 'present')
      return {
        kind: 'done',
        view: w.view,
        pod: {
          uid: pod.pod.meta.uid!,
          ...(pod.pod.ip ? { ip: pod.pod.ip } : {}),
          ...(pod.pod.nodeName ? { node: pod.pod.nodeName } : {}),
        },
        seen,
        waitedMs,
      };
    if (j.done) return { kind: 'done', view: w.view, pod: { uid: '' }, seen, waitedMs };
    if (j.samePod) return { kind: 'not', why: 'the pod was not replaced', seen, waitedMs, samePod: true };
    if (Date.now() - started >= limit || signal.aborted)
      return { kind: 'not', why: signal.aborted ? 'interrupted' : `not within ${formatMs(limit)}`, seen, waitedMs };
    await new Promise((resolve) => setTimeout(resolve, POD_POLL_MS));
  }
}
