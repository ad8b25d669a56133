/**
 * Evidence from waiting for the probe sandbox: `verified` proven for what a Ready sandbox at its current generation
 * shows, or `unknown` with the wait's reason (plus its pod's Warning events and per-node sandbox failures). For a Ready
 * one, also the runtime target: the pod, its IP and its ports.
 */
import type { PodView } from '../../../adapter/kubernetes/views.js';
import { formatMs } from '../../evidence.js';
import type { RuntimeKind, TemplatePlan, VerifyPlan } from '../../plan.js';
import type { RuntimeTarget } from '../../runtime-prober.js';
import { reads, type ProbeDeps } from '../common.js';
import { describeWarning, nodeFailureEvidence, podWarnings } from '../pod-events.js';
import { needingReady, type WorkloadFacts } from './facts.js';
import type { Readiness } from './readiness.js';

/** What the runtime checks need of a Ready probe sandbox. */
export interface ProbeSandbox {
  readonly name: string;
  readonly pod?: PodView;
  /** `pod <name> Ready=… IP …`, or why the pod was not readable: appended to runtime evidence. */
  readonly podState: string;
  readonly target: RuntimeTarget;
}

/** Subject of the wait's evidence: the Sandbox when one was seen, else the probe for the template. */
function waitSubject(template: TemplatePlan, r: Readiness): string {
  return r.sandbox
    ? `Sandbox ${template.namespace}/${r.sandbox.meta.name}`
    : `probe for ${template.namespace}/${template.name}`;
}

export async function notReadyEvidence(
  deps: ProbeDeps,
  template: TemplatePlan,
  f: WorkloadFacts,
  r: Extract<Readiness, { ready: false }>,
): Promise<void> {
  const podName = r.sandbox?.podName;
  const warnings = podName ? await podWarnings(deps, template.namespace, podName) : [];
  const why = `${r.why}${warnings.length ? `; pod ${podName} events: ${warnings.slice(0, 5).map(describeWarning).join('; ')}` : ''}`;
  // The pod's warnings also as data: `field` names the pod, `value` lists `reason@node×count` (node `-` when none).
  const events = warnings.length
    ? {
        field: `events[pod=${podName}]`,
        value: warnings
          .slice(0, 5)
          .map((w) => `${w.reason}@${w.node ?? '-'}×${w.count}`)
          .join(', '),
      }
    : {};
  for (const x of needingReady(f))
    x.add('verified', 'unknown', waitSubject(template, r), r.reason, why, { durationMs: r.waitedMs, ...events });
  if (f.rc && podName) await nodeFailureEvidence(deps, f.rc, template, podName);
}

export async function readyEvidence(
  deps: ProbeDeps,
  template: TemplatePlan,
  runtime: RuntimeKind,
  f: WorkloadFacts,
  r: Extract<Readiness, { ready: true }>,
): Promise<ProbeSandbox> {
  const subject = waitSubject(template, r);
  const { name, generation } = r.sandbox.meta;
  const readyMsg = `Sandbox ${name} Ready=True at its current generation ${generation} after ${formatMs(r.waitedMs)}`;
  for (const x of [f.template, f.exec, f.files, f.api])
    x.proven('verified', subject, 'SandboxReady', readyMsg, {
      field: 'status.conditions[Ready]',
      value: 'True',
      durationMs: r.waitedMs,
    });
  f.ctrl.proven(
    'verified',
    subject,
    'ControllerReconciled',
    `the controller reconciled ${name} to Ready at generation ${generation}`,
  );
  if (r.claim) {
    const msg = `claim ${r.claim.meta.name} bound Sandbox ${name}, which it controls (adoption finished), Ready at generation ${generation}`;
    f.wp?.proven('verified', `SandboxClaim ${template.namespace}/${r.claim.meta.name}`, 'ClaimBoundSandbox', msg);
    f.ext?.proven('verified', `SandboxClaim ${template.namespace}/${r.claim.meta.name}`, 'ClaimBoundSandbox', msg);
  }
  return probeSandbox(deps, template, runtime, r);
}

/** Reads the probe sandbox's pod for its IP and readiness, and builds the runtime target. */
export async function probeSandbox(
  deps: ProbeDeps,
  template: TemplatePlan,
  runtime: RuntimeKind,
  r: Extract<Readiness, { ready: true }>,
): Promise<ProbeSandbox> {
  const { podName } = r.sandbox;
  const podR = await reads(deps).pod(template.namespace, podName);
  const pod = podR.kind === 'ok' ? podR.value : undefined;
  const podIP = pod?.ip ?? r.sandbox.podIPs[0];
  const podState = pod
    ? `pod ${podName} Ready=${pod.ready ? 'True' : 'False'}${podIP ? ` IP ${podIP}` : ''}`
    : `pod ${podName} not readable (${podR.kind === 'ok' ? 'not found' : podR.kind})`;
  return {
    name: r.sandbox.meta.name,
    ...(pod ? { pod } : {}),
    podState,
    target: {
      ...runtimeTarget(template, runtime, deps.plan.transport, r.sandbox.meta.name, podName, podIP),
      // Every runtime answer is bound to the pod read here: a replacement during a probe voids the sample.
      ...(pod?.meta.uid ? { podUid: pod.meta.uid } : {}),
    },
  };
}

function runtimeTarget(
  template: TemplatePlan,
  kind: RuntimeKind,
  transport: VerifyPlan['transport'],
  sandbox: string,
  pod: string,
  podIP: string | undefined,
): RuntimeTarget {
  return {
    kind,
    transport,
    namespace: template.namespace,
    sandbox,
    pod,
    ...(podIP ? { podIP } : {}),
    restPort: template.ports.rest,
    ...(template.ports.grpc !== undefined ? { grpcPort: template.ports.grpc } : {}),
  };
}
