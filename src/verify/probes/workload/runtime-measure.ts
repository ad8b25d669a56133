/**
 * What the verifier measures of a template's runtime once it answered (issue 30 item 5), recorded on the template's
 * capability as `proven` facts (measurements, not requirements: a runtime that alters bytes still runs commands):
 * - the time to first instruction: from the claim (or Sandbox) create to the first command answered, for a warm pool
 *   member (the claim adopted one) or a cold start (the controller made a Sandbox for it);
 * - whether output bytes that are not UTF-8 come back unchanged (`printf 'ok\377'`);
 * - the largest output returned intact, trying sizes up to the adapter's per-stream cap;
 * - the longest synchronous command each transport allows (src/adapter/runtime/layer-limits.ts, the release's defaults).
 * Each command's ending is the adapter's `ExecutionOutcome` reason.
 */
import { DEFAULT_LIMITS } from '../../../adapter/runtime/limits.js';
import { routerLimits, syncCallLimits } from '../../../adapter/runtime/layer-limits.js';
import { routerLimitFacts } from '../../../releases/router-limits.js';
import type { TransportKind } from '../../../adapter/types.js';
import { formatMs } from '../../evidence.js';
import type { TemplatePlan } from '../../plan.js';
import type { ExecOutput, RuntimeCall } from '../../runtime-prober.js';
import type { ProbeDeps } from '../common.js';
import type { Readiness } from './readiness.js';
import type { ProbeSandbox } from './sandbox-ready.js';
import type { WorkloadFacts } from './facts.js';

/** Output sizes tried, bytes, smallest first, up to the adapter's per-stream cap. */
export const OUTPUT_SIZES: readonly number[] = [64 << 10, 1 << 20, DEFAULT_LIMITS.maxResponseBytes];

/** The bytes `printf 'ok\377'` writes: the last is not UTF-8. */
const BINARY = Buffer.from([0x6f, 0x6b, 0xff]);

/** Whether the probe sandbox was a warm pool member the claim adopted (its name is not the claim's), else a cold start. */
export function startKind(readiness: Extract<Readiness, { ready: true }>): 'warm' | 'cold' {
  const claim = readiness.claim;
  return claim && readiness.sandbox.meta.name !== claim.meta.name ? 'warm' : 'cold';
}

/** The ending of a call as the adapter's outcome reason, or the call's own kind when there was no answer. */
export function endingOf(call: RuntimeCall<ExecOutput>): string {
  if (call.kind === 'answered') return call.value.outcome?.reason ?? `exit ${call.value.exitCode}`;
  return (call.kind !== 'silent' ? call.outcome : undefined) ?? call.kind;
}

/** Whether `call` returned exactly `size` bytes of stdout, uncut, from a command that exited 0. */
export function intact(call: RuntimeCall<ExecOutput>, size: number): boolean {
  if (call.kind !== 'answered' || call.value.exitCode !== 0) return false;
  const out = call.value.stdoutBytes;
  return out !== undefined && !out.truncated && out.data.length === size && out.totalBytes === size;
}

/**
 * Runs the first command right after the sandbox got Ready and records the time from `startedAt` (just before the
 * claim or Sandbox was created) to its answer.
 */
export async function firstInstructionEvidence(
  deps: ProbeDeps,
  f: WorkloadFacts,
  sb: ProbeSandbox,
  readiness: Extract<Readiness, { ready: true }>,
  startedAt: number,
): Promise<void> {
  const call = await deps.runtime.execute(sb.target, ['true'], deps.plan.probeTimeoutMs);
  const ms = Date.now() - startedAt;
  const kind = startKind(readiness);
  const subject = `runtime of ${sb.name}`;
  if (call.kind === 'answered' && call.value.exitCode === 0)
    f.template.proven(
      'verified',
      subject,
      'TimeToFirstInstruction',
      `${kind === 'warm' ? 'warm pool member' : 'cold start'}: first command answered ${formatMs(ms)} after the ${readiness.claim ? 'claim' : 'Sandbox'} was created (Ready after ${formatMs(readiness.waitedMs)})`,
      { field: kind, value: formatMs(ms), observed: { ms, readyMs: readiness.waitedMs } },
    );
  else
    f.template.add(
      'verified',
      'unknown',
      subject,
      'TimeToFirstInstruction',
      `the first command after Ready did not answer (${endingOf(call)}): no time to first instruction`,
      { field: kind, value: endingOf(call) },
    );
}

/** Binary safety, the largest intact output and each transport's synchronous limit, for a runtime that answered. */
export async function runtimeMeasureEvidence(
  deps: ProbeDeps,
  template: TemplatePlan,
  f: WorkloadFacts,
  sb: ProbeSandbox,
): Promise<void> {
  if (template.runtime !== 'sandboxd' && template.runtime !== 'python-runtime') return;
  const runtime = template.runtime;
  const subject = `runtime of ${sb.name}`;
  const deadline = deps.plan.probeTimeoutMs;

  const bin = await deps.runtime.execute(sb.target, ['printf', 'ok\\377'], deadline);
  const got = bin.kind === 'answered' ? bin.value.stdoutBytes?.data : undefined;
  const safe = got !== undefined && got.equals(BINARY);
  f.template.proven(
    'verified',
    subject,
    safe ? 'OutputBinarySafe' : 'OutputNotBinarySafe',
    safe
      ? `printf 'ok\\377' came back as its 3 bytes over ${deps.plan.transport}`
      : `printf 'ok\\377' did not come back as its 3 bytes over ${deps.plan.transport}: ${got ? `got ${got.toString('hex')}` : endingOf(bin)}`,
    { field: 'stdout', value: got ? got.toString('hex') : endingOf(bin) },
  );

  let largest = 0;
  let failed: { size: number; ending: string } | undefined;
  for (const size of OUTPUT_SIZES) {
    const call = await deps.runtime.execute(sb.target, ['head', '-c', String(size), '/dev/zero'], deadline);
    if (!intact(call, size)) {
      failed = { size, ending: endingOf(call) };
      break;
    }
    largest = size;
  }
  f.template.proven(
    'verified',
    subject,
    'LargestIntactOutput',
    `largest output returned intact: ${largest} bytes${failed ? `; ${failed.size} bytes ended ${failed.ending}` : ` (the adapter's per-stream cap is ${DEFAULT_LIMITS.maxResponseBytes} bytes)`}`,
    {
      field: 'stdout',
      value: String(largest),
      observed: { bytes: largest, ...(failed ? { failedBytes: failed.size } : {}) },
    },
  );

  const transports: TransportKind[] = [deps.plan.transport];
  // sandboxd speaks gRPC, which no router carries: its commands have no router path to measure
  if (deps.plan.router?.url && deps.plan.transport !== 'router' && runtime !== 'sandboxd') transports.push('router');
  for (const t of transports) {
    const facts = t === 'router' ? routerLimitFacts(deps.plan.release) : undefined;
    const l = syncCallLimits(
      t,
      { kind: runtime },
      deps.plan.release,
      facts ? routerLimits(facts) : undefined,
    ).effective;
    f.template.proven(
      'verified',
      subject,
      'SyncCallLimit',
      `longest synchronous command via ${t}: ${formatMs(l.limitMs)} (${l.label})`,
      { field: t, value: formatMs(l.limitMs), observed: { ms: l.limitMs } },
    );
  }
}
