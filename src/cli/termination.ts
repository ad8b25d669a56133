/**
 * The verifier pod's termination message: a short summary of the run that Kubernetes keeps in the pod's status
 * (`state.terminated.message`), so `kubectl get pod -o yaml`, `kubectl describe` and Argo CD's hook view show the outcome
 * after the log is gone (case posthook-before-sandboxes-ready). The kubelet keeps at most 4 KiB of it
 * (`pkg/kubelet/kuberuntime/kuberuntime_container.go@v1.31.0`, maxContainerTerminationMessageLength); the full report
 * stays in the report ConfigMap.
 */
import { writeFileSync } from 'node:fs';
import type { VerifyReport } from '../verify/index.js';

/** Bytes of a termination message the kubelet keeps. */
export const TERMINATION_MESSAGE_BYTES = 4096;
/** The default `terminationMessagePath` of a container; `AGENTPLANE_TERMINATION_LOG` overrides it (tests). */
export function terminationLogPath(): string {
  return process.env.AGENTPLANE_TERMINATION_LOG ?? '/dev/termination-log';
}

const TRUNCATED = '\n… (truncated)';

/** `text` cut to at most `max` UTF-8 bytes on a character boundary, marked when cut. */
export function withinBytes(text: string, max = TERMINATION_MESSAGE_BYTES): string {
  if (Buffer.byteLength(text, 'utf8') <= max) return text;
  const room = max - Buffer.byteLength(TRUNCATED, 'utf8');
  let out = '';
  let used = 0;
  for (const ch of text) {
    const n = Buffer.byteLength(ch, 'utf8');
    if (used + n > room) break;
    out += ch;
    used += n;
  }
  return out + TRUNCATED;
}

/**
 * The summary of a finished run: outcome and exit code, where the full report is, then each capability below its
 * required state with its state and the reason code of the next missing evidence, then those that met it.
 */
export function terminationSummary(report: VerifyReport, exitCode: number, reportConfigMap?: string): string {
  const unmet = report.capabilities.filter((c) => !c.met);
  const met = report.capabilities.filter((c) => c.met);
  const lines = [
    `agentplane verify: ${report.outcome} (exit ${exitCode}); environment ${report.environment.name}, release ${report.environment.release}`,
    ...(reportConfigMap ? [`report: ConfigMap ${reportConfigMap}`] : []),
    ...unmet.map(
      (c) =>
        `${c.name}: ${c.state}, required ${c.required}${c.nextReason ? ` (${c.nextReason})` : ''}${c.next ? `: ${c.next}` : ''}`,
    ),
    ...(met.length > 0 ? [`met: ${met.map((c) => `${c.name} ${c.state}`).join(', ')}`] : []),
    ...(report.leftovers.length > 0 ? [`leftovers: ${report.leftovers.join('; ')}`] : []),
  ];
  return withinBytes(lines.join('\n'));
}

/** The summary of a run that could not finish (an error document's reason and message). */
export function terminationFailure(reason: string, message: string, exitCode: number): string {
  return withinBytes(`agentplane verify: could not run (exit ${exitCode}): ${reason}: ${message}`);
}

/** Writes `text` as the termination message; a failure is reported on stderr, never thrown (it must not change the exit code). */
export function writeTerminationMessage(text: string, file = terminationLogPath()): void {
  try {
    writeFileSync(file, text, 'utf8');
  } catch (err) {
    process.stderr.write(
      `warning: termination message not written to ${file}: ${err instanceof Error ? err.message : String(err)}\n`,
    );
  }
}
