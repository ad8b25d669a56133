/**
 * The last part of the suspend-resume round trip, on the resumed pod: the runtime-exec proof again (same sample, same
 * deadlines), then the nonce file written before suspension read back and judged by what the release keeps of the
 * runtime's root (the adapter's workspace.ts: only volumeClaimTemplate PVCs survive; an emptyDir or the container
 * filesystem is new with the pod, so there nothing is promised and the evidence says what was found).
 */
import type { SandboxView } from '../../../adapter/kubernetes/views.js';
import { sandboxdRoot, workspaceVolume, type WorkspaceVolume } from '../../../adapter/kubernetes/workspace.js';
import { sampleSize, type TemplatePlan } from '../../plan.js';
import type { RuntimeCall, RuntimeTarget } from '../../runtime-prober.js';
import type { Facts, ProbeDeps } from '../common.js';
import { describeFailure, proveExecution, runtimeFailureReason } from './runtime-proof.js';

/** sandboxd's `--root-dir` default (`packages/sandboxd/cmd/sandboxd/main.go@v0.5.6`). */
const SANDBOXD_ROOT = '/workspace';

/** The nonce file written before suspension, and how the write (a write read back) answered. */
export interface NonceFile {
  readonly path: string;
  readonly nonce: string;
  readonly wrote: RuntimeCall<string>;
}

/** Records `verified` evidence on `f` (capability suspend-resume) for the runtime and the workspace after resume. */
export async function afterResume(
  deps: Pick<ProbeDeps, 'runtime' | 'plan' | 'workload'>,
  template: TemplatePlan,
  f: Facts,
  sb: SandboxView,
  target: RuntimeTarget,
  file: NonceFile,
  opts: { readonly signal?: AbortSignal; readonly podState: string },
): Promise<void> {
  const runtimeOk = await proveExecution(
    deps.runtime,
    target,
    {
      probeTimeoutMs: deps.plan.probeTimeoutMs,
      runId: deps.workload.runId,
      samples: sampleSize(deps.plan),
      ...(opts.signal ? { signal: opts.signal } : {}),
    },
    f,
    opts.podState,
  );
  if (runtimeOk) await workspaceEvidence(deps, template, f, sb, target, file);
}

/** Reads the nonce back on the resumed pod and judges it by what the release keeps of the runtime's root. */
async function workspaceEvidence(
  deps: Pick<ProbeDeps, 'runtime' | 'plan'>,
  template: TemplatePlan,
  f: Facts,
  sb: SandboxView,
  target: RuntimeTarget,
  w: NonceFile,
): Promise<void> {
  const subject = `workspace of ${template.namespace}/${sb.meta.name}`;
  if (w.wrote.kind !== 'answered' || w.wrote.value !== w.nonce) {
    const why =
      w.wrote.kind === 'answered'
        ? `read back ${JSON.stringify(w.wrote.value.slice(0, 60))}`
        : describeFailure(w.wrote, deps.plan.probeTimeoutMs);
    f.add(
      'verified',
      'unknown',
      subject,
      'WorkspaceUnchecked',
      `the nonce file could not be written before suspension: ${why}`,
    );
    return;
  }
  const vol: WorkspaceVolume | undefined =
    template.runtime === 'sandboxd' ? workspaceVolume(sb, sandboxdRoot(sb) ?? SANDBOXD_ROOT) : undefined;
  const r = await deps.runtime.readFile(target, w.path, deps.plan.probeTimeoutMs);
  if (r.kind !== 'answered') {
    f.add(
      'verified',
      'unknown',
      subject,
      runtimeFailureReason(r),
      `reading the nonce file after resume: ${describeFailure(r, deps.plan.probeTimeoutMs)}`,
    );
    return;
  }
  const found = r.value === null ? 'absent' : r.value === w.nonce ? 'present' : 'changed';
  if (vol?.kept) {
    if (found === 'present')
      f.proven(
        'verified',
        subject,
        'WorkspaceKept',
        `the nonce file written before suspension is there after resume: ${vol.on}`,
        {
          field: w.path,
          value: found,
        },
      );
    else
      f.add(
        'verified',
        'missing',
        subject,
        'WorkspaceLost',
        `the nonce file is ${found} after resume, though ${vol.on}, which the release keeps`,
        {
          field: w.path,
          value: found,
        },
      );
    return;
  }
  const on = vol?.on ?? `the ${template.runtime} file root is not known to be on a volume`;
  f.proven(
    'verified',
    subject,
    'WorkspaceNotKept',
    `the release promises no workspace across suspend here (${on}; only volumeClaimTemplate PVCs are kept); the nonce file is ${found} after resume`,
    { field: w.path, value: found },
  );
}
