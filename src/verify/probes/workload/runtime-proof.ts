/**
 * Proof that a sandbox's runtime executes commands over the client's transport: a health call (retried while the
 * runtime is not listening yet), then N distinct nonce commands in a row (the plan's sample size), each under its own
 * deadline. One failure anywhere in the sample keeps it below verified and is reported with its position.
 */
import { formatMs } from '../../evidence.js';
import type { RuntimeFailureReason } from '../../reasons.js';
import type { RuntimeCall, RuntimeProber, RuntimeTarget } from '../../runtime-prober.js';
import type { Facts } from '../common.js';

/**
 * Proves execution over the client's transport: `samples` distinct nonce commands (`echo <nonce>`) in a row, each under
 * its own deadline; every one must answer exit 0 with exactly the nonce. Adds `verified` evidence to `exec` and returns
 * whether all did. The first failure stops the sample: a silent or hanging runtime gives `unknown` (state stays
 * configured), a wrong answer `missing`; either names its position (`sample k of N`).
 */
export async function proveExecution(
  runtime: RuntimeProber,
  target: RuntimeTarget,
  opts: { probeTimeoutMs: number; runId: string; samples: number; signal?: AbortSignal },
  exec: Facts,
  podState: string,
): Promise<boolean> {
  const { probeTimeoutMs, samples } = opts;
  const subject = `${target.kind} of ${target.sandbox} via ${target.transport}`;
  // Ready flips when the container starts, before the runtime listens (`controllers/sandbox_controller.go@v0.5.6`): a refused connection is
  // retried until the probe deadline; a hang is not (it already used the whole deadline).
  const contact = await firstContact(runtime, target, probeTimeoutMs, opts.signal);
  if (contact.kind !== 'answered') {
    exec.add(
      'verified',
      'unknown',
      subject,
      runtimeFailureReason(contact),
      `runtime API did not answer: ${describeFailure(contact, probeTimeoutMs)}; ${podState}`,
      { field: 'health', durationMs: contact.durationMs },
    );
    return false;
  }
  const durations: number[] = [];
  for (let round = 1; round <= samples; round += 1) {
    if (opts.signal?.aborted) {
      exec.add('verified', 'unknown', subject, 'Interrupted', 'interrupted before the nonce commands finished');
      return false;
    }
    const nonce = `agentplane-${opts.runId}-${round}-${Math.random().toString(36).slice(2, 10)}`;
    const r = await runtime.execute(target, ['echo', nonce], probeTimeoutMs);
    if (r.kind !== 'answered') {
      exec.add(
        'verified',
        'unknown',
        subject,
        runtimeFailureReason(r),
        `sample ${round} of ${samples} failed after ${round - 1} success(es): runtime API did not answer: ${describeFailure(r, probeTimeoutMs)}; ${podState}`,
        { field: `Execute(echo <nonce ${round}>)`, value: `sample ${round}/${samples}`, durationMs: r.durationMs },
      );
      return false;
    }
    const out = r.value.stdout.trim();
    if (r.value.exitCode !== 0 || out !== nonce) {
      exec.add(
        'verified',
        'missing',
        subject,
        'NonceMismatch',
        `sample ${round} of ${samples}: runtime answered exit ${r.value.exitCode} "${out.slice(0, 80)}" to echo ${nonce}; expected exit 0 and the nonce`,
        { field: `Execute(echo <nonce ${round}>)`, value: out.slice(0, 80), durationMs: r.durationMs },
      );
      return false;
    }
    durations.push(r.durationMs);
  }
  exec.proven(
    'verified',
    subject,
    'NonceEchoed',
    `${samples} of ${samples} nonce commands in a row echoed exactly (exit 0), slowest ${formatMs(Math.max(...durations))}`,
    {
      field: 'Execute(echo <nonce>)',
      value: `${samples}/${samples}`,
      durationMs: durations.reduce((a, b) => a + b, 0),
    },
  );
  return true;
}

/**
 * Health calls until one is answered, retrying refused connections every 250 ms within `deadlineMs` in all. A retry
 * starts only while at least twice the last refused attempt's time is left: an attempt begun with less (a port-forward
 * takes a round trip through the API server and the kubelet before the pod refuses) would run out of deadline and
 * turn a runtime that refused every connection into a timeout.
 */
async function firstContact(
  runtime: RuntimeProber,
  target: RuntimeTarget,
  deadlineMs: number,
  signal?: AbortSignal,
): Promise<RuntimeCall<string>> {
  const started = Date.now();
  let attempts = 0;
  for (;;) {
    attempts += 1;
    const remaining = deadlineMs - (Date.now() - started);
    const attemptStarted = Date.now();
    const r = await runtime.health(target, Math.max(1, remaining));
    const left = deadlineMs - (Date.now() - started);
    if (r.kind !== 'silent' || signal?.aborted || left < 250 + 2 * (Date.now() - attemptStarted)) {
      // The outcome's duration is the whole contact, not the last attempt: a runtime that starts listening late and
      // then hangs has still used the full deadline.
      if (r.kind === 'answered') return r;
      const durationMs = Date.now() - started;
      return { ...r, durationMs, detail: `${r.detail}; ${attempts} attempt(s) in ${formatMs(durationMs)}` };
    }
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

export function describeFailure(
  r: { kind: 'timeout' | 'silent' | 'error'; detail: string },
  deadlineMs: number,
): string {
  if (r.kind === 'timeout') return `no answer in ${formatMs(deadlineMs)} (${r.detail})`;
  if (r.kind === 'silent') return `nothing answers (${r.detail})`;
  return r.detail;
}

/** The reason code of a runtime call that got no usable answer. */
export function runtimeFailureReason(r: {
  kind: 'timeout' | 'silent' | 'error';
  redirect?: true;
  refused?: true;
  replaced?: true;
  tooLarge?: true;
}): RuntimeFailureReason {
  if (r.kind === 'error' && r.replaced) return 'RuntimePodReplaced';
  if (r.kind === 'error' && r.tooLarge) return 'RuntimeAnswerTooLarge';
  if (r.kind === 'error' && r.redirect) return 'RuntimeRedirected';
  if (r.kind === 'error' && r.refused) return 'RuntimeTransportRefused';
  return r.kind === 'timeout' ? 'RuntimeTimeout' : r.kind === 'silent' ? 'RuntimeSilent' : 'RuntimeError';
}
