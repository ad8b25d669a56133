/**
 * Evidence from using a Ready probe sandbox's runtime the way a client does: commands (two nonces), the file API
 * (a write read back), and the runtime's health through the router.
 */
import type { TemplatePlan } from '../../plan.js';
import type { ProbeRun } from '../../runner.js';
import { formatMs } from '../../evidence.js';
import type { ProbeDeps } from '../common.js';
import type { WorkloadFacts } from './facts.js';
import { describeFailure, proveExecution, runtimeFailureReason } from './runtime-proof.js';
import type { ProbeSandbox } from './sandbox-ready.js';

/** Proves execution and records what it means for the template, the Sandbox API and the warm pool; whether it held. */
export async function executionEvidence(deps: ProbeDeps, template: TemplatePlan, f: WorkloadFacts, sb: ProbeSandbox, ctx: ProbeRun): Promise<boolean> {
  const { plan } = deps;
  ctx.note(`asking ${template.runtime} in ${sb.name} over ${plan.transport} (deadline ${formatMs(plan.probeTimeoutMs)} per call)`);
  const ok = await proveExecution(deps.runtime, sb.target, { probeTimeoutMs: plan.probeTimeoutMs, runId: deps.workload.runId, signal: ctx.signal }, f.exec, sb.podState);
  const subject = `runtime of ${sb.name}`;
  for (const x of [f.template, f.api]) {
    if (ok) x.proven('verified', subject, 'RuntimeAnswered', `runtime answered two nonce commands over ${plan.transport}`);
    else x.add('verified', 'unknown', subject, 'RuntimeNotVerified', `runtime API not verified (see runtime-exec); ${sb.podState}`);
  }
  if (f.wp) {
    if (ok) f.wp.proven('verified', subject, 'RuntimeAnswered', 'runtime of the adopted sandbox answered');
    else f.wp.add('verified', 'unknown', subject, 'RuntimeNotVerified', `runtime of the adopted sandbox did not answer correctly; ${sb.podState}`);
  }
  return ok;
}

/** sandboxd only: writes a file and reads it back over the client's transport. */
export async function fileEvidence(deps: ProbeDeps, template: TemplatePlan, f: WorkloadFacts, sb: ProbeSandbox): Promise<void> {
  if (template.runtime !== 'sandboxd') return;
  const { plan } = deps;
  const path = `.agentplane-verify-${deps.workload.runId}`;
  const content = `agentplane-verify ${deps.workload.runId} ${Date.now()}`;
  const r = await deps.runtime.fileRoundTrip(sb.target, path, content, plan.probeTimeoutMs);
  const subject = `runtime of ${sb.name}`;
  if (r.kind === 'answered' && r.value === content) f.files.proven('verified', subject, 'FileRoundTrip', `wrote and read back ${path} (${content.length} bytes) over ${plan.transport}`, { durationMs: r.durationMs });
  else if (r.kind === 'answered') f.files.add('verified', 'missing', subject, 'FileContentDiffers', `file read back differs from what was written (${JSON.stringify(r.value.slice(0, 60))})`, { durationMs: r.durationMs });
  else f.files.add('verified', 'unknown', subject, runtimeFailureReason(r), `file round trip: ${describeFailure(r, plan.probeTimeoutMs)}; ${sb.podState}`, { durationMs: r.durationMs });
}

/** When a router URL is known: the runtime's health through the router (HTTP/1.1). */
export async function routerEvidence(deps: ProbeDeps, template: TemplatePlan, f: WorkloadFacts, sb: ProbeSandbox): Promise<void> {
  const url = deps.plan.router?.url;
  if (!url) return;
  const r = await deps.runtime.health(sb.target, deps.plan.probeTimeoutMs, 'router');
  if (r.kind === 'answered') f.router.proven('verified', `router ${url}`, 'RouterReachedRuntime', `${template.runtime} health of ${sb.name} answered "${r.value}" through the router`, { durationMs: r.durationMs });
  else f.router.add('verified', 'unknown', `router ${url}`, runtimeFailureReason(r), `health through the router: ${describeFailure(r, deps.plan.probeTimeoutMs)}`, { durationMs: r.durationMs });
}
