/**
 * Isolation seen from inside a sandbox (case gvisor-runtimeclass-unschedulable): the `verified` step of `runtime-class/<name>` needs the runtime to
 * answer with evidence of the isolating kernel, not only a pod that ran with `runtimeClassName` set.
 *
 * gVisor: the Sentry keeps its own kernel log, which it starts with one line at time zero, `Starting gVisor...`
 * (written with priority `<6>` and a `[%11.6f]` time stamp; `dmesg` inside the sandbox reads that log through
 * syslog(2)). An ordinary Linux kernel's log starts with `Linux version …` at time zero, or — once its ring buffer has
 * wrapped — with some later line at a non-zero time. So the check is that the FIRST line of `dmesg` is the gVisor
 * boot line at time 0.000000, not that the word "gvisor" appears anywhere: a host kernel's log can mention a gVisor
 * path (`/var/lib/gvisor/...`, a `runsc-gofer` process name) without the sandbox running under gVisor. A process with
 * root on a host kernel can write text into /dev/kmsg, but that line gets the current time stamp, never 0.000000 as
 * the first line; this check does not defend against a runtime that lies about its own command output.
 *
 * Kata: `uname -r` inside differs from the node's `status.nodeInfo.kernelVersion` (a guest VM kernel).
 */
import type { PodView } from '../../adapter/kubernetes/views.js';
import type { RuntimeProber, RuntimeTarget } from '../runtime-prober.js';
import { reads, shared, type Facts, type ProbeDeps } from './common.js';

/** The gVisor boot line: optional syslog priority, time 0, `Starting gVisor...`. */
const GVISOR_BOOT_LINE = /^(?:<\d+>)?\[\s*0\.0+\]\s+Starting gVisor\.\.\.\s*$/;

/**
 * The gVisor boot line when `dmesg` output is a gVisor Sentry's log, else undefined. Pure.
 * @param dmesg stdout of `dmesg` run inside the sandbox (no options; util-linux or busybox, priority prefix or not).
 * @returns the first non-empty line, trimmed, when it is `[    0.000000] Starting gVisor...`; undefined otherwise
 *   (including an ordinary kernel log that merely mentions gVisor).
 */
export function gvisorBootLine(dmesg: string): string | undefined {
  const first = dmesg
    .split('\n')
    .map((l) => l.trim())
    .find((l) => l.length > 0);
  return first !== undefined && GVISOR_BOOT_LINE.test(first) ? first : undefined;
}

/**
 * Asks the runtime for `dmesg` (argv `['dmesg']`, no shell, one call under `deadlineMs`) and adds one `verified` fact
 * for RuntimeClass `name` to `rc`: `proven` when {@link gvisorBootLine} finds the boot line (value = that line),
 * else `missing` naming what was seen and the acceptance test `isolation/<name>`. Never throws.
 */
export async function gvisorIsolation(
  runtime: RuntimeProber,
  target: RuntimeTarget,
  deadlineMs: number,
  rc: Facts,
  name: string,
): Promise<void> {
  const subject = `pod ${target.namespace}/${target.pod}`;
  const r = await runtime.execute(target, ['dmesg'], deadlineMs);
  const boot = r.kind === 'answered' && r.value.exitCode === 0 ? gvisorBootLine(r.value.stdout) : undefined;
  if (boot !== undefined) {
    rc.proven(
      'verified',
      subject,
      'GvisorKernel',
      'dmesg inside the sandbox names gVisor: its kernel log starts with the gVisor boot line at time 0',
      { field: 'Execute(dmesg)', value: boot, durationMs: r.durationMs },
    );
    return;
  }
  const first =
    r.kind === 'answered' ? ((r.value.stdout || r.value.stderr).trim().split('\n')[0] ?? '').slice(0, 80) : '';
  const seen = r.kind === 'answered' ? `exit ${r.value.exitCode}: ${first}` : r.detail;
  // What was seen: the first line and the exit code of an answer; the kind of failure of a call that got none.
  const observation =
    r.kind === 'answered' ? { value: first, observed: { exitCode: r.value.exitCode } } : { cause: r.kind };
  rc.add(
    'verified',
    'missing',
    subject,
    'NotGvisorKernel',
    `isolation not proven: dmesg inside the sandbox does not name gVisor (its first line is not the boot line "[    0.000000] Starting gVisor..."; ${seen})`,
    {
      field: 'Execute(dmesg)',
      ...observation,
      durationMs: r.durationMs,
      missingTest: `isolation/${name}: a pod under handler runsc whose dmesg names gVisor`,
    },
  );
}

/**
 * The isolation RuntimeClass `name` promises (pure): the environment's declared preset, else what its handler or its
 * name says (`runsc` / a name with `gvisor`: gVisor; `kata*` / a name with `kata`: a VM), else none. The name counts
 * because a class named `gvisor` whose handler runs runc must not pass as "no extra isolation claimed".
 */
export function promisedIsolation(
  name: string,
  handler: string,
  declared: 'gvisor' | 'kata' | undefined,
): 'gvisor' | 'kata' | 'none' {
  if (declared !== undefined) return declared;
  if (handler === 'runsc') return 'gvisor';
  if (handler.startsWith('kata')) return 'kata';
  if (/gvisor/i.test(name)) return 'gvisor';
  if (/kata/i.test(name)) return 'kata';
  return 'none';
}

/**
 * The `verified` evidence of RuntimeClass `name` for the probe pod: the pod ran under it (proven, with its node), then
 * isolation from inside by what the class promises ({@link promisedIsolation}) — gVisor via {@link gvisorIsolation},
 * a VM by kernel comparison, none: no extra isolation claimed (proven once the runtime answered). `runtimeOk` false =
 * the runtime never answered: isolation stays `unknown`. Never throws.
 */
export async function isolationEvidence(
  deps: ProbeDeps,
  rc: Facts,
  name: string,
  pod: PodView | undefined,
  target: RuntimeTarget,
  runtimeOk: boolean,
): Promise<void> {
  const subject = `pod ${target.namespace}/${target.pod}`;
  const spec = { runtimeClassName: pod?.runtimeClassName, nodeName: pod?.nodeName };
  if (spec.runtimeClassName !== name) {
    rc.add(
      'verified',
      'missing',
      subject,
      'RuntimeClassNotApplied',
      `pod runs with runtimeClassName ${spec.runtimeClassName ?? 'unset'}, not ${name}`,
    );
    return;
  }
  rc.proven(
    'verified',
    subject,
    'RanUnderRuntimeClass',
    `pod ran under RuntimeClass ${name} on node ${spec.nodeName ?? '?'}`,
    { field: 'spec.runtimeClassName', value: name },
  );
  if (!runtimeOk) {
    rc.add('verified', 'unknown', subject, 'IsolationNotChecked', 'isolation not checked: the runtime did not answer');
    return;
  }
  const read = reads(deps);
  const handler = await shared(deps).runtimeClass(name);
  const h = handler.kind === 'ok' && handler.value ? handler.value.handler : '';
  const deadline = deps.plan.probeTimeoutMs;
  const promised = promisedIsolation(name, h, deps.plan.runtimeClassIsolation?.[name]);
  if (promised === 'gvisor') {
    await gvisorIsolation(deps.runtime, target, deadline, rc, name);
  } else if (promised === 'kata') {
    const r = await deps.runtime.execute(target, ['uname', '-r'], deadline);
    const node = spec.nodeName ? await read.nodes() : undefined;
    const nodeKernel =
      node?.kind === 'ok' ? (node.value.find((n) => n.meta.name === spec.nodeName)?.kernelVersion ?? '') : '';
    const inside = r.kind === 'answered' ? r.value.stdout.trim() : '';
    if (inside && nodeKernel && inside !== nodeKernel)
      rc.proven(
        'verified',
        subject,
        'GuestKernelDiffers',
        `guest kernel ${inside} differs from node kernel ${nodeKernel} (VM isolation)`,
      );
    else
      rc.add(
        'verified',
        'missing',
        subject,
        'GuestKernelNotDistinct',
        `isolation not proven: guest kernel "${inside || '?'}" vs node kernel "${nodeKernel || '?'}"`,
        { missingTest: `isolation/${name}: a Kata pod whose kernel differs from its node's` },
      );
  } else {
    rc.proven(
      'verified',
      subject,
      'NoExtraIsolation',
      `handler ${h || '?'} claims no extra isolation; the pod ran and its runtime answered`,
    );
  }
}
