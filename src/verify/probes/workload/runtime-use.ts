/**
 * Evidence from using a Ready probe sandbox's runtime the way a client does: commands (two nonces), the file API
 * (a write read back), and the runtime's health through the router.
 */
import { routerClientsSendPodIP, sampleSize, type TemplatePlan } from '../../plan.js';
import type { ProbeRun } from '../../runner.js';
import { formatMs } from '../../evidence.js';
import { reads, type ProbeDeps } from '../common.js';
import type { WorkloadFacts } from './facts.js';
import { describeFailure, proveExecution, runtimeFailureReason } from './runtime-proof.js';
import { routerCause, routerCauseNote } from './router-cause.js';
import type { ProbeSandbox } from './sandbox-ready.js';

/** Proves execution and records what it means for the template, the Sandbox API and the warm pool; whether it held. */
export async function executionEvidence(
  deps: ProbeDeps,
  template: TemplatePlan,
  f: WorkloadFacts,
  sb: ProbeSandbox,
  ctx: ProbeRun,
): Promise<boolean> {
  const { plan } = deps;
  ctx.note(
    `asking ${template.runtime} in ${sb.name} over ${plan.transport} (deadline ${formatMs(plan.probeTimeoutMs)} per call)`,
  );
  const ok = await proveExecution(
    deps.runtime,
    sb.target,
    { probeTimeoutMs: plan.probeTimeoutMs, runId: deps.workload.runId, samples: sampleSize(plan), signal: ctx.signal },
    f.exec,
    sb.podState,
  );
  const subject = `runtime of ${sb.name}`;
  for (const x of [f.template, f.api]) {
    if (ok)
      x.proven(
        'verified',
        subject,
        'RuntimeAnswered',
        `runtime answered ${sampleSize(plan)} nonce commands in a row over ${plan.transport}`,
      );
    else
      x.add(
        'verified',
        'unknown',
        subject,
        'RuntimeNotVerified',
        `runtime API not verified (see runtime-exec); ${sb.podState}`,
      );
  }
  if (f.wp) {
    if (ok) f.wp.proven('verified', subject, 'RuntimeAnswered', 'runtime of the adopted sandbox answered');
    else
      f.wp.add(
        'verified',
        'unknown',
        subject,
        'RuntimeNotVerified',
        `runtime of the adopted sandbox did not answer correctly; ${sb.podState}`,
      );
  }
  return ok;
}

/** Whether the router path was addressed by the pod IP the declared clients send (else by name). */
function byPodIP(deps: ProbeDeps, sb: ProbeSandbox): boolean {
  return routerClientsSendPodIP(deps.plan) && sb.target.podIP !== undefined;
}

function addressed(deps: ProbeDeps, sb: ProbeSandbox): string {
  return byPodIP(deps, sb) ? `X-Sandbox-Pod-IP ${sb.target.podIP}, as the client sends it` : 'by name';
}

/** The declared clients whose calls go through the router (descriptor `clients`, `via: router`). */
function routerClients(deps: ProbeDeps): NonNullable<ProbeDeps['plan']['clients']> {
  return (deps.plan.clients ?? []).filter((c) => c.via === 'router');
}

/**
 * Writes a file and reads it back (the python runtime: upload, list, exists, download). With a declared router-mode
 * client this goes through the router, the client's own path; else over the verifier's transport.
 */
export async function fileEvidence(
  deps: ProbeDeps,
  template: TemplatePlan,
  f: WorkloadFacts,
  sb: ProbeSandbox,
): Promise<void> {
  if (template.runtime !== 'sandboxd' && template.runtime !== 'python-runtime') return;
  const { plan } = deps;
  const via = routerClients(deps).length > 0 && plan.router?.url ? ('router' as const) : undefined;
  const path = `.agentplane-verify-${deps.workload.runId}`;
  const content = `agentplane-verify ${deps.workload.runId} ${Date.now()}`;
  const r = await deps.runtime.fileRoundTrip(sb.target, path, content, plan.probeTimeoutMs, via);
  const subject = `runtime of ${sb.name}`;
  const over = via === 'router' ? `the router (the declared client's path)` : plan.transport;
  if (r.kind === 'answered' && r.value === content)
    f.files.proven(
      'verified',
      subject,
      'FileRoundTrip',
      `wrote and read back ${path} (${content.length} bytes) over ${over}`,
      { durationMs: r.durationMs },
    );
  else if (r.kind === 'answered')
    f.files.add(
      'verified',
      'missing',
      subject,
      'FileContentDiffers',
      `file read back differs from what was written (${JSON.stringify(r.value.slice(0, 60))})`,
      { durationMs: r.durationMs },
    );
  else
    f.files.add(
      'verified',
      'unknown',
      subject,
      runtimeFailureReason(r),
      `file round trip over ${over}: ${describeFailure(r, plan.probeTimeoutMs)}; ${sb.podState}`,
      { durationMs: r.durationMs },
    );
}

/**
 * When a router URL is known: with a declared router-mode client, the client's own calls through the router (a nonce
 * `execute` on the client's port with its headers). Without one, nonce commands (sandboxd: REST health) through the
 * router exactly as the SDKs address it by name (`X-Sandbox-ID`, `-Namespace`, `-Port`, no `X-Sandbox-Pod-IP`),
 * `samples` times in a row (case router-warm-nxdomain). A failure is compared with the direct path (`directOk`, the client transport's
 * own sample) and classified ({@link routerCause}) from the router's answer, a control call with the pod-IP header and
 * the per-sandbox Service.
 */
export async function routerEvidence(
  deps: ProbeDeps,
  template: TemplatePlan,
  f: WorkloadFacts,
  sb: ProbeSandbox,
  directOk: boolean,
): Promise<void> {
  const url = deps.plan.router?.url;
  if (!url) return;
  const clients = routerClients(deps);
  if (clients.length > 0) {
    for (const c of clients) {
      const who = `${c.sdk} ${c.version} (${c.mode})`;
      const target = { ...sb.target, restPort: c.ports[0] ?? sb.target.restPort };
      const nonce = `agentplane-${deps.workload.runId}-client-${Math.random().toString(36).slice(2, 10)}`;
      const r = await deps.runtime.execute(target, ['echo', nonce], deps.plan.probeTimeoutMs, 'router');
      if (r.kind === 'answered' && r.value.exitCode === 0 && r.value.stdout.trim() === nonce) {
        f.router.proven(
          'verified',
          `router ${url}`,
          'ClientPathAnswered',
          `${who}: execute of a nonce on ${template.runtime} port ${target.restPort} of ${sb.name} answered exactly through the router (${addressed(deps, sb)})`,
          {
            field: 'addressed by',
            value: byPodIP(deps, sb) ? 'X-Sandbox-Pod-IP' : 'X-Sandbox-ID',
            durationMs: r.durationMs,
          },
        );
      } else if (r.kind === 'answered') {
        f.router.add(
          'verified',
          'missing',
          `router ${url}`,
          'ClientPathFailed',
          `${who}: execute through the router answered exit ${r.value.exitCode} "${r.value.stdout.trim().slice(0, 60)}", not the nonce`,
          { durationMs: r.durationMs },
        );
      } else {
        f.router.add(
          'verified',
          'unknown',
          `router ${url}`,
          runtimeFailureReason(r),
          `${who}: execute through the router on port ${target.restPort}: ${describeFailure(r, deps.plan.probeTimeoutMs)}`,
          { durationMs: r.durationMs },
        );
      }
    }
    return;
  }
  const samples = sampleSize(deps.plan);
  const subject = `router ${url} -> ${template.namespace}/${sb.name}`;
  const durations: number[] = [];
  // sandboxd executes over gRPC, which the HTTP/1.1-only router cannot carry (proxy.go@v0.5.6): its REST health then.
  const what = template.runtime === 'sandboxd' ? 'health' : 'execute';
  for (let i = 1; i <= samples; i += 1) {
    const nonce = `agentplane-${deps.workload.runId}-router-${i}-${Math.random().toString(36).slice(2, 8)}`;
    const run =
      what === 'health'
        ? await deps.runtime.health(sb.target, deps.plan.probeTimeoutMs, 'router')
        : await deps.runtime.execute(sb.target, ['echo', nonce], deps.plan.probeTimeoutMs, 'router');
    if (run.kind === 'answered') {
      const v = run.value;
      if (typeof v === 'string' || (v.exitCode === 0 && v.stdout.trim() === nonce)) {
        durations.push(run.durationMs);
        continue;
      }
    }
    const r =
      run.kind !== 'answered'
        ? run
        : {
            kind: 'error' as const,
            durationMs: run.durationMs,
            detail: `execute answered ${JSON.stringify(run.value).slice(0, 80)}, not the nonce`,
          };
    const svc = await reads(deps).service(template.namespace, sb.name);
    const control = sb.target.podIP
      ? await deps.runtime.health(sb.target, deps.plan.probeTimeoutMs, 'router-pod-ip')
      : undefined;
    const ctx = {
      service: svc.kind === 'ok' ? svc.value !== undefined : undefined,
      byPodIP: control ? (control.kind === 'answered' ? ('answered' as const) : ('failed' as const)) : undefined,
    };
    const direct = directOk
      ? `the direct path (${deps.plan.transport}) answered every sample`
      : `the direct path (${deps.plan.transport}) failed too`;
    f.router.add(
      'verified',
      'unknown',
      subject,
      run.kind === 'answered' ? 'NonceMismatch' : routerCause(r, ctx),
      `${what} sample ${i} of ${samples} through the router (by name, as clients call it) failed after ${i - 1} success(es): ${describeFailure(r, deps.plan.probeTimeoutMs)}; ${direct}; ${routerCauseNote(ctx, sb.name, template.namespace)}`,
      {
        field: `${what} via router`,
        value: `sample ${i}/${samples}`,
        // The controls behind the cause class: whether the per-sandbox Service exists (its DNS fallback needs it) and
        // whether the router reached the pod by X-Sandbox-Pod-IP (then its cache did not hold the sandbox); 1 = yes.
        observed: {
          ...(ctx.service === undefined ? {} : { perSandboxService: ctx.service ? 1 : 0 }),
          ...(ctx.byPodIP === undefined ? {} : { byPodIpAnswered: ctx.byPodIP === 'answered' ? 1 : 0 }),
        },
        durationMs: r.durationMs,
        cause: directOk ? 'router-path-differs' : 'both-paths-fail',
      },
    );
    return;
  }
  f.router.proven(
    'verified',
    subject,
    'RouterReachedRuntime',
    `${template.runtime} of ${sb.name} answered ${samples} of ${samples} ${what === 'health' ? 'health calls' : 'nonce commands'} in a row through the router by name (no pod-IP header)`,
    { field: `${what} via router`, value: `${samples}/${samples}`, durationMs: durations.reduce((a, b) => a + b, 0) },
  );
}
